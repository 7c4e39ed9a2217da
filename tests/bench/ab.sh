#!/usr/bin/env bash
# A/B throughput of two swthrottle binaries, with grep as the reference, all
# interleaved in one run so that a busy machine slows them alike. For a change
# that must be no slower (a refactor): give it the binary before and after.
#
#   tests/bench/ab.sh BEFORE AFTER
#
# BENCH_LINES=N   lines of the generated log (default 2000000)
# BENCH_REPEAT=N  rounds; the fastest run of each command counts (default 5)
#
# Prints, per command, the fastest wall time, lines/s and the ratio to grep
# (higher is faster), for -j 1 and -j $(nproc), and checks that both binaries
# write the same records.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ $# -eq 2 ]] || { echo "usage: tests/bench/ab.sh BEFORE AFTER" >&2; exit 2; }
before="$1" after="$2"
lines="${BENCH_LINES:-2000000}"
repeat="${BENCH_REPEAT:-5}"
nproc_="$(nproc)"

bench_work_dir ab
log="$work/bench.log"
python3 "$here/gen_log.py" --out "$log" --lines "$lines" --keys 10000 --seed 1
python3 "$here/gen_rules.py" --rules 8 --toml "$work/r8.toml" --patterns "$work/p8.txt"
cat "$log" >/dev/null

sw() { "$1" --format json -j "$2" --rule "$work/r8.toml" "$log"; }
sw "$before" 1 >"$work/before.json"
sw "$after" 1 >"$work/after.json"
if cmp -s "$work/before.json" "$work/after.json"; then same=yes; else same=NO; fi

best() { sort -n "$work/$1.t" | head -n1; }
timed() {  # ID CMD...
  local id="$1"; shift
  local s e
  s="$(date +%s%N)"
  # Into a file: GNU grep stops at the first match when its output is /dev/null.
  "$@" >"$work/out" 2>&1 || [[ $? -eq 1 ]]
  e="$(date +%s%N)"
  echo "$((e - s))" >>"$work/$id.t"
}
for ((round = 1; round <= repeat; round++)); do
  timed grep env LC_ALL=C grep -cE -f "$work/p8.txt" "$log"
  for j in 1 "$nproc_"; do
    timed "before-j$j" sw "$before" "$j"
    timed "after-j$j" sw "$after" "$j"
  done
done

g="$(best grep)"
printf '%d lines, %d rounds, fastest run each; load %s; records identical: %s\n\n' \
  "$lines" "$repeat" "$(bench_load)" "$same"
printf '| command | s | lines/s | vs grep |\n| --- | ---: | ---: | ---: |\n'
for id in grep before-j1 after-j1 "before-j$nproc_" "after-j$nproc_"; do
  ns="$(best "$id")"
  awk -v id="$id" -v ns="$ns" -v g="$g" -v n="$lines" \
    'BEGIN { printf "| %s | %.3f | %.2f M | %.2fx |\n", id, ns / 1e9, n / (ns / 1e9) / 1e6, g / ns }'
done
