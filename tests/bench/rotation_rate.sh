#!/usr/bin/env bash
# Rotation at a rate (issue 32, item 9): how many lines `swthrottle --follow`
# loses when a writer renames the followed file every 5 ms, 1 ms or back to
# back, over the previous rotation (so a file renamed twice before it is
# opened is gone), without ever waiting for the reader; GNU `tail -F` beside
# it. Prints a Markdown table: lines written, read, lost, read twice.
#
#   tests/bench/rotation_rate.sh BINARY
#
# BENCH_GENERATIONS=N  files written per rate (default 1000), 10 lines each
# BENCH_RUNS=N         runs per rate (default 3); the table gives each run
# BENCH_INTERVALS="5 1 0"   the rename intervals, in ms
# BENCH_WHO="swthrottle tail" the followers (an older BINARY, alone, for a before)
#
# A measure of a race with the scheduler, not a speed: the load average is
# printed with the figures (a loaded machine loses more).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_binary_arg "tests/bench/rotation_rate.sh BINARY" "$@"
bench_need_tools python3 tail
generations="${BENCH_GENERATIONS:-1000}"
runs="${BENCH_RUNS:-3}"
bench_work_dir rotation-bench

cat >"$work/rules.toml" <<'TOML'
[[rule]]
name = "every-line"
kind = "throttle"
threshold = "1000000000 per 1s"
  [[rule.event]]
  name = "line"
  match = '^seq=\d{10} '
TOML

# count FILE TOTAL: "read lost twice" of the lines in FILE against 0..TOTAL-1.
count() {
  python3 - "$1" "$2" <<'PY'
import re, sys
seen = {}
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"seq=(\d{10}) ", line)
    if m:
        seen[int(m.group(1))] = seen.get(int(m.group(1)), 0) + 1
total = int(sys.argv[2])
print(len(seen), total - len(seen), sum(n - 1 for n in seen.values() if n > 1))
PY
}

# run_one FOLLOWER INTERVAL_MS: one run; prints "written read lost twice".
run_one() {
  local who=$1 interval=$2 d="$work/run" pid total out
  rm -rf "$d" && mkdir -p "$d"
  : >"$d/app.log"
  out="$d/out"
  if [[ $who == swthrottle ]]; then
    "$bin" -r "$work/rules.toml" --follow --from-start "$d/app.log" >"$out" 2>"$d/err" &
  else
    tail -F -n +1 "$d/app.log" >"$out" 2>"$d/err" &
  fi
  pid=$!
  sleep 0.5  # the follower is up (a start-up, not a race)
  total=$(python3 "$here/rotation_writer.py" "$d" "$generations" 10 "$interval")
  # Until nothing more comes for a second.
  local last=-1 now
  while now=$(wc -l <"$out"); [[ $now != "$last" ]]; do
    last=$now
    sleep 1
  done
  kill "$pid" && wait "$pid" 2>/dev/null || true
  echo "$total $(count "$out" "$total")"
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores; $generations files of 10 lines per run"
echo
echo "| follower | rename every | run | written | read | lost | read twice |"
echo "|---|---|---|---|---|---|---|"
for interval in ${BENCH_INTERVALS:-5 1 0}; do
  for who in ${BENCH_WHO:-swthrottle tail}; do
    for ((r = 1; r <= runs; r++)); do
      read -r written got lost twice < <(run_one "$who" "$interval")
      echo "| $who | ${interval} ms | $r | $written | $got | $lost | $twice |"
    done
  done
done
