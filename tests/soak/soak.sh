#!/usr/bin/env bash
# Soak of swthrottle --follow (issue 18, part 3; not in CI):
#
#   tests/soak/soak.sh SECONDS [BINARY]      (BINARY: build/swthrottle)
#
# Follows SOAK_FILES (4) files while tests/soak/writer.py appends SOAK_RATE
# (30000) numbered lines a second in total to them for SECONDS, rotating one
# every SOAK_ROTATE_EVERY (2) seconds, rename + create and copytruncate in
# turn (see writer.py for what it waits for before each, and why). Meanwhile:
# a SIGHUP every 30 s (the rules file is rewritten first, its throttle's
# threshold changed, so each reload is a real one that keeps the windows), a
# SIGUSR1 every 10 s (the statistics, on standard error), and VmRSS read from
# /proc/PID/status every SOAK_RSS_EVERY (2) seconds.
#
# The rules pass every line: a throttle rule keyed by file whose Y no second
# reaches writes each line unchanged, and an alert rule (every line whose
# number ends in 000) adds alert records between them. tests/soak/checker.py
# reads the output and counts each line by its number.
#
# Once the writer is done, the script waits until every line came out (or
# none came for 30 s), stops swthrottle with SIGTERM, and prints a table.
# Exit status 1 when a line was lost, duplicated, garbled or out of order
# within its file, when a wait of the writer timed out, when a SIGHUP did not
# reload (swthrottle_reloads_total of --metrics-file) or a SIGUSR1 gave no
# report (signals that wait too long are merged), or when RSS grew past
# the bound: the largest sample after the warm-up (the first fifth of the
# run, at most 60 s) must stay below 1.2 x the first sample after it.
set -euo pipefail

if [[ $# -lt 1 || ! "$1" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 SECONDS [BINARY]" >&2
  exit 2
fi
duration=$1
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "${2:-$here/../../build/swthrottle}")
[[ -x "$bin" ]] || { echo "soak: $bin: not an executable (build it, or name it)" >&2; exit 2; }
files=${SOAK_FILES:-4}
rate=${SOAK_RATE:-30000}
rotate_every=${SOAK_ROTATE_EVERY:-2}
rss_every=${SOAK_RSS_EVERY:-2}
bound=1.2
warmup=$((duration / 5 < 60 ? duration / 5 : 60))

work=$(mktemp -d "${TMPDIR:-/tmp}/swthrottle-soak.XXXXXX")
pid=""
checker=""
writer=""
cleanup() {
  for p in $writer $pid $checker; do kill "$p" 2>/dev/null || true; done
  if [[ -n "${SOAK_KEEP:-}" ]]; then echo "soak: files kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

write_rules() {  # $1: the throttle's Y, so that each reload changes something
  cat >"$work/rules.toml.tmp" <<EOF
[[rule]]
name      = "every-line"
kind      = "throttle"
threshold = "$1 per 1s"
key       = "{file}"
  [[rule.event]]
  name  = "numbered"
  match = '^seq=\d{10} f=(?P<file>\d+) '

[[rule]]
name      = "thousands"
kind      = "alert"
threshold = "1 per 1s"
cooldown  = "1s"
message   = "soak: line {n} in file {file}"
  [[rule.event]]
  name  = "round"
  match = '^seq=(?P<n>\d{7}000) f=(?P<file>\d+) '
EOF
  mv "$work/rules.toml.tmp" "$work/rules.toml"
}
write_rules 1000000000

inputs=()
for ((k = 0; k < files; k++)); do
  : >"$work/app$k.log"
  inputs+=("$work/app$k.log")
done
mkfifo "$work/out"
python3 "$here/checker.py" "$work/progress" "$work/checked" <"$work/out" &
checker=$!
"$bin" -r "$work/rules.toml" --follow --from-start --stats --metrics-file "$work/metrics.prom" "${inputs[@]}" >"$work/out" 2>"$work/stderr" &
pid=$!
python3 "$here/writer.py" "$work" "$files" "$duration" "$rate" "$pid" "$rotate_every" "$work/written" &
writer=$!

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0; }
started=$(date +%s)
: >"$work/rss"
hups=0
usr1s=0
while kill -0 "$writer" 2>/dev/null; do
  sleep "$rss_every"
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "soak: swthrottle ended during the run:" >&2
    cat "$work/stderr" >&2
    exit 1
  fi
  t=$(($(date +%s) - started))
  echo "$t $(rss_kb)" >>"$work/rss"
  if ((t / 30 > hups)); then
    hups=$((hups + 1))
    write_rules $((1000000000 + hups % 2))
    kill -HUP "$pid"
  fi
  if ((t / 10 > usr1s)); then
    usr1s=$((usr1s + 1))
    kill -USR1 "$pid"
  fi
done
wait "$writer" || { echo "soak: the writer failed" >&2; exit 1; }
writer=""
written=$(sed -n 's/.*written=\([0-9]*\).*/\1/p' "$work/written")

# Every line out, or nothing new for 30 s.
last=-1
still=0
while :; do
  got=$(cat "$work/progress" 2>/dev/null || echo 0)
  ((got >= written)) && break
  if ((got == last)); then still=$((still + 1)); else still=0; fi
  ((still >= 30)) && break
  last=$got
  sleep 1
done
echo "$(($(date +%s) - started)) $(rss_kb)" >>"$work/rss"
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=""
wait "$checker"
checker=""

field() { sed -n "s/.*\\b$2=\\([0-9.]*\\).*/\\1/p" "$1"; }
distinct=$(field "$work/checked" distinct)
duplicated=$(field "$work/checked" duplicated)
garbled=$(field "$work/checked" garbled)
out_of_order=$(field "$work/checked" out_of_order)
max_seq=$(field "$work/checked" max_seq)
lost=$((written - distinct))
stats=$(grep '^swthrottle: stats: lines' "$work/stderr" | tail -1)
read_lines=$(sed -n 's/.*stats: lines \([0-9]*\).*/\1/p' <<<"$stats")
usr1_seen=$(grep -c '^swthrottle: stats: lines' "$work/stderr" || true)
timeouts=$(field "$work/written" timeouts)
reloads=$(awk '$1 == "swthrottle_reloads_total" { print $2 }' "$work/metrics.prom")

# RSS: the first sample after the warm-up is the base; every later sample must stay below bound x base.
read -r rss_min rss_max rss_last base post_max < <(awk -v warm="$warmup" '
  { if (NR == 1 || $2 < min) min = $2; if ($2 > max) max = $2; last = $2
    if ($1 >= warm) { if (base == "") base = $2; if ($2 > pmax) pmax = $2 } }
  END { print min, max, last, base, pmax }' "$work/rss")
rss_ok=$(awk -v m="$post_max" -v b="$base" -v k="$bound" 'BEGIN { print (b > 0 && m < k * b) ? 1 : 0 }')

printf '\nswthrottle soak: %s s, %s files, %s (%s)\n' "$duration" "$files" "$(nproc) cores" "$(uname -m)"
printf '  %-34s %s\n' \
  "writer" "$(cat "$work/written")" \
  "lines written" "$written" \
  "lines read (swthrottle --stats)" "$read_lines" \
  "lines out, distinct" "$distinct" \
  "lost" "$lost" \
  "duplicated" "$duplicated" \
  "garbled" "$garbled" \
  "out of order within a file" "$out_of_order" \
  "highest number out" "$max_seq" \
  "alert records" "$(field "$work/checked" records)" \
  "SIGHUPs / SIGUSR1s sent" "$hups / $usr1s" \
  "reloads that took effect" "${reloads:-none}" \
  "statistics reports on stderr" "$usr1_seen (one per SIGUSR1, one at exit)" \
  "swthrottle exit status" "$status" \
  "RSS samples (every ${rss_every} s)" "$(wc -l <"$work/rss")" \
  "RSS min / max / last (KiB)" "$rss_min / $rss_max / $rss_last" \
  "RSS after ${warmup} s warm-up (KiB)" "base $base, max $post_max (bound: < $bound x base)" \
  "RSS flat within bound" "$([[ $rss_ok == 1 ]] && echo yes || echo NO)"
if [[ -n "${SOAK_RSS_LOG:-}" ]]; then cp "$work/rss" "$SOAK_RSS_LOG"; fi
grep -v '^swthrottle: stats' "$work/stderr" | grep -v 'reloaded\|rules' | head -5 | sed 's/^/  stderr: /' || true

fail=0
((lost == 0 && duplicated == 0 && garbled == 0 && out_of_order == 0)) || fail=1
((timeouts == 0)) || { echo "soak: $timeouts waits of the writer timed out" >&2; fail=1; }
# Signals 30 s and 10 s apart: one that waited that long for its turn was merged with the next.
[[ "${reloads:-}" == "$hups" ]] || { echo "soak: $hups SIGHUPs, ${reloads:-no} reloads" >&2; fail=1; }
((usr1_seen == usr1s + 1)) || { echo "soak: $usr1s SIGUSR1s, $((usr1_seen - 1)) reports" >&2; fail=1; }
[[ $rss_ok == 1 ]] || fail=1
[[ $status == 0 ]] || { echo "soak: swthrottle exited $status" >&2; fail=1; }
if ((fail)); then echo "soak: FAILED" >&2; else echo "soak: passed"; fi
exit "$fail"
