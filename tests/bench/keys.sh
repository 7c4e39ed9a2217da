#!/usr/bin/env bash
# Keys (issue #17 item 3): a long replay whose keyed rule sees 10^6 distinct
# keys stays within the memory of its `max_keys`, not of the keys it saw.
# The benchmark log (gen_log.py) with BENCH_KEYS client addresses, the 8
# benchmark rules plus the keyed http-client rule (gen_rules.py --client-key),
# replayed once per `max_keys` in BENCH_MAX_KEYS. Prints Markdown: wall and
# CPU time, peak RSS (/usr/bin/time), the keys created (an evicted key that
# comes back is created again), evicted and held at the
# end (--stats), and the peak RSS above the run that keeps one key
# (max_keys = 1, the first value) per key held.
#
#   tests/bench/keys.sh BINARY      a Release swthrottle
#
# BENCH_LINES=N       lines of the log (default 4000000)
# BENCH_KEYS=N        distinct client addresses (default 1000000)
# BENCH_MAX_KEYS=list max_keys values (default "1 10000 100000 1000000")
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_binary_arg "tests/bench/keys.sh SWTHROTTLE" "$@"
lines="${BENCH_LINES:-4000000}"
keys="${BENCH_KEYS:-1000000}"
max_list="${BENCH_MAX_KEYS:-1 10000 100000 1000000}"
bench_need_time

bench_work_dir keys-bench
log="$work/bench.log"
python3 "$here/gen_log.py" --out "$log" --lines "$lines" --keys "$keys" --seed 1
cat "$log" >/dev/null  # in the page cache before anything is timed

printf '%d lines, %d client addresses; load before %s\n\n' "$lines" "$keys" "$(bench_load)"
printf '| max_keys | s | CPU s | peak RSS MiB | keys created | evicted | held | RSS above the first row, per key held |\n'
printf '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n'
base_kib=""
for max in $max_list; do
  rules="$work/rules-$max.toml"
  python3 "$here/gen_rules.py" --rules 8 --client-key --max-keys "$max" --toml "$rules"
  /usr/bin/time -f '%e %M %U %S' -o "$work/time" "$bin" -j 1 -r "$rules" --format json --stats "$log" \
    >/dev/null 2>"$work/err" || { echo "max_keys $max failed:" >&2; cat "$work/err" >&2; exit 1; }
  read -r s kib user sys <"$work/time"
  # The --stats line of the keyed rule: "rule http-client: ... keys N evicted N":
  # the keys it holds at the end, and those max_keys pushed out.
  kept="$(grep -o 'http-client:.*' "$work/err" | grep -o 'keys [0-9]*' | head -n1 | cut -d' ' -f2)"
  evicted="$(grep -o 'http-client:.*' "$work/err" | grep -o 'evicted [0-9]*' | head -n1 | cut -d' ' -f2)"
  kept="${kept:-0}"
  evicted="${evicted:-0}"
  created=$((kept + evicted))
  [[ -z "$base_kib" ]] && base_kib="$kib"
  awk -v max="$max" -v s="$s" -v c="$(awk -v u="$user" -v y="$sys" 'BEGIN { print u + y }')" -v kib="$kib" \
    -v created="$created" -v evicted="$evicted" -v kept="$kept" -v base="$base_kib" 'BEGIN {
      per = kept > 1 ? sprintf("%.0f B", (kib - base) * 1024 / kept) : "-";
      printf "| %d | %.2f | %.2f | %.0f | %d | %d | %d | %s |\n", max, s, c, kib / 1024, created, evicted, kept, per }'
done
