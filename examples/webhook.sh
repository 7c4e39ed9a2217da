#!/usr/bin/env bash
# webhook.sh: POST swthrottle's JSON records to a webhook, one request per record.
#
#   swthrottle --rule rules.toml --format json app.log | examples/webhook.sh https://hooks.example.com/swthrottle
#   export SWTHROTTLE_WEBHOOK_URL=https://hooks.example.com/swthrottle
#   tail -F /var/log/auth.log | swthrottle --rule examples/sshd/rules.toml --time arrival --format json | examples/webhook.sh
#
# Input: JSON Lines on standard input, as `swthrottle --format json` writes
# them. Each record is sent as it arrives, so an alert goes out while the
# pipeline keeps running; a slow webhook slows swthrottle down (the pipe
# fills) rather than losing records.
#
# What is sent: "alert", "resolved" and "summary" records. "line" records
# (the log lines a throttle rule passed) are skipped, unless
# SWTHROTTLE_WEBHOOK_ALL=1, which sends every record. Empty input lines are
# skipped, and a \r before the newline is not part of the record. A
# record's type is read from its "type" field; a record without
# one is sent.
#
# Each record is one
#   curl -fsS --retry 3 --retry-connrefused --max-time 10 \
#        -H 'Content-Type: application/json' --data-binary @- -o /dev/null URL
# whose body is the record's line exactly (without the newline). curl
# itself retries what it calls transient (a refused connection, a timeout,
# HTTP 408, 429, 500, 502, 503, 504). When curl still fails (also on any
# other HTTP error, as -f makes a status >= 400 a failure), the record is
# tried again, up to SWTHROTTLE_WEBHOOK_TRIES attempts in all (default 3),
# waiting SWTHROTTLE_WEBHOOK_BACKOFF seconds (default 2) before the second
# attempt and twice as long before each one after it.
#
# URL: the first argument, else $SWTHROTTLE_WEBHOOK_URL.
#
# Exit status: 0 when every record was delivered; 1 when at least one was
# not (each is reported on standard error, with the record itself, when its
# last attempt fails, and the script goes on with the next record); 2 for a
# usage error.
set -u -o pipefail

prog=${0##*/}

usage() {
  printf '%s\n' "$prog: $1" "usage: $prog [URL]   (or set SWTHROTTLE_WEBHOOK_URL); JSON Lines on stdin" >&2
  exit 2
}

if (( $# > 1 )); then
  usage "too many arguments"
fi
url=${1:-${SWTHROTTLE_WEBHOOK_URL:-}}
[[ -n $url ]] || usage "no webhook URL given"

tries=${SWTHROTTLE_WEBHOOK_TRIES:-3}
backoff=${SWTHROTTLE_WEBHOOK_BACKOFF:-2}
send_all=${SWTHROTTLE_WEBHOOK_ALL:-0}
[[ $tries =~ ^[1-9][0-9]*$ ]] || usage "SWTHROTTLE_WEBHOOK_TRIES must be a whole number >= 1, not '$tries'"
[[ $backoff =~ ^[0-9]+$ ]] || usage "SWTHROTTLE_WEBHOOK_BACKOFF must be whole seconds, not '$backoff'"

# post RECORD: one attempt (curl's own retries included); curl's error
# message, if any, on stdout. The response body is not wanted.
post() {
  printf '%s' "$1" |
    curl -fsS --retry 3 --retry-connrefused --max-time 10 \
      -H 'Content-Type: application/json' --data-binary @- -o /dev/null "$url" 2>&1
}

# deliver LINE_NUMBER RECORD: all attempts for one record; 1 when they all failed.
deliver() {
  local number=$1 record=$2 attempt=1 delay=$backoff error
  while ! error=$(post "$record"); do
    if (( attempt >= tries )); then
      error=${error//$'\n'/ }
      printf '%s: could not deliver the record of input line %d after %d attempts (%s): %s\n' \
        "$prog" "$number" "$attempt" "${error:-curl failed}" "$record" >&2
      return 1
    fi
    sleep "$delay"
    delay=$((delay * 2))
    attempt=$((attempt + 1))
  done
  return 0
}

type_re='"type"[[:space:]]*:[[:space:]]*"([A-Za-z_]+)"'
number=0
failed=0
# `|| [[ -n $record ]]`: a last line without a newline is a record too.
while IFS= read -r record || [[ -n $record ]]; do
  number=$((number + 1))
  record=${record%$'\r'}
  [[ -n $record ]] || continue
  # Inside a JSON string every quote is escaped, so the first unescaped
  # "type": "..." pair is the record's own type field.
  if [[ $send_all != 1 && $record =~ $type_re && ${BASH_REMATCH[1]} == line ]]; then
    continue
  fi
  deliver "$number" "$record" || failed=$((failed + 1))
done

if (( failed > 0 )); then
  # Not the URL: webhook URLs often carry a secret token.
  printf '%s: %d record(s) not delivered\n' "$prog" "$failed" >&2
  exit 1
fi
exit 0
