#!/usr/bin/env bash
# Multi-line grouping against none, on the benchmark corpus (gen_log.py's log
# carries Java stack traces) with the 8 benchmark rules: the same binary, the
# same rules, once with `multiline = "java"` added to [settings], interleaved
# round by round so that a busy machine slows both alike. Issue 12 asks for
# grouping at most 10 % slower than without.
#
#   tests/bench/multiline.sh build/swthrottle
#
# BENCH_LINES=N   lines of the generated log (default 2000000)
# BENCH_REPEAT=N  rounds; the fastest run of each command counts (default 5)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_binary_arg "tests/bench/multiline.sh SWTHROTTLE" "$@"
lines="${BENCH_LINES:-2000000}"
repeat="${BENCH_REPEAT:-5}"
nproc_="$(nproc)"

bench_work_dir ml
log="$work/bench.log"
python3 "$here/gen_log.py" --out "$log" --lines "$lines" --keys 10000 --seed 1
python3 "$here/gen_rules.py" --rules 8 --toml "$work/plain.toml" --patterns "$work/p8.txt"
# The same rules, grouped: [settings] gains one key.
sed 's/^\[settings\]$/[settings]\nmultiline = "java"/' "$work/plain.toml" >"$work/java.toml"
grep -q '^multiline = "java"$' "$work/java.toml" || { echo "no [settings] to add multiline to" >&2; exit 2; }
cat "$log" >/dev/null

timed() {  # ID CMD...
  local id="$1"; shift
  local s e
  s="$(date +%s%N)"
  "$@" >"$work/out.$id" 2>"$work/err.$id"
  e="$(date +%s%N)"
  echo "$((e - s))" >>"$work/$id.t"
}
for ((round = 1; round <= repeat; round++)); do
  for j in 1 "$nproc_"; do
    timed "plain-j$j" "$bin" --stats -j "$j" --rule "$work/plain.toml" "$log"
    timed "java-j$j" "$bin" --stats -j "$j" --rule "$work/java.toml" "$log"
  done
done

best() { sort -n "$work/$1.t" | head -n1; }
events() { sed -n 's/^swthrottle: stats: lines \([0-9]*\) .*/\1/p' "$work/err.$1"; }
printf '%d lines, %d rounds, fastest run each; load %s\n\n' "$lines" "$repeat" "$(bench_load)"
printf '| command | s | lines/s (input) | events decided | vs plain |\n| --- | ---: | ---: | ---: | ---: |\n'
for j in 1 "$nproc_"; do
  p="$(best "plain-j$j")"
  for id in "plain-j$j" "java-j$j"; do
    ns="$(best "$id")"
    awk -v id="$id" -v ns="$ns" -v p="$p" -v n="$lines" -v ev="$(events "$id")" \
      'BEGIN { printf "| %s | %.3f | %.2f M | %s | %+.1f %% |\n", id, ns / 1e9, n / (ns / 1e9) / 1e6, ev, (ns / p - 1) * 100 }'
  done
done
