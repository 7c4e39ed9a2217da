#!/bin/sh
# Mails one swthrottle record through sendmail: for a rule's exec (see
# email-sendmail.toml). Usage: sendmail.sh RECIPIENT
#
# The record arrives as JSON on stdin and in SWTHROTTLE_* variables. The
# subject is built from those, with line breaks taken out: a log line (a
# key, a message) must not be able to add a header (a Bcc:) to the mail.
# The body is the message, then the record itself.
set -eu
if [ $# -ne 1 ]; then
  echo "usage: $0 RECIPIENT" >&2
  exit 2
fi
to=$1
one_line() { printf '%s' "$1" | tr -d '\r\n' | cut -c1-200; }
subject="[swthrottle] $(one_line "${SWTHROTTLE_TYPE:-}") $(one_line "${SWTHROTTLE_RULE:-}")"
if [ -n "${SWTHROTTLE_KEY:-}" ]; then subject="$subject $(one_line "$SWTHROTTLE_KEY")"; fi
{
  printf 'To: %s\nSubject: %s\nContent-Type: text/plain; charset=utf-8\n\n' "$(one_line "$to")" "$subject"
  printf '%s\n\n' "${SWTHROTTLE_MESSAGE:-}"
  cat
} | "${SENDMAIL:-/usr/sbin/sendmail}" -t -i
