#!/usr/bin/env bash
# Rule-set scale (issue #17 item 2, issue #18's large rules file): the cost of 8, 100 and
# 1,000 rules on the benchmark log at -j 1 and -j 2, start-up (load only with --check,
# and time to the first record), and the load of 1k, 10k and 88k rules (seconds, peak
# RSS). Prints Markdown, with the ratios (1000 rules vs 8) measured in the same run.
#
#   tests/bench/rulescale.sh            build build-bench/ (Release), then run
#   tests/bench/rulescale.sh BINARY     run BINARY (a Release swthrottle)
#
# BENCH_LINES=N   lines of the log (default 2000000; 200000 for a quick look)
# BENCH_REPEAT=N  runs per command, the fastest counts (default 3)
# BENCH_SEED=N    seed of the generated log (default 1)
# BENCH_BIG=list  rule counts of the load table (default "1000 10000 88000")
#
# The rules come from tests/bench/gen_rules.py: the 8 alert rules and 56 extras of
# throughput.sh, then a generated pack in the style of a shared rule pack (daemon
# messages, vendor message ids, probed URLs, exception classes) whose literals share
# words with the log. The log is tests/bench/gen_log.py's, shared with throughput.sh
# (same name, same cache in ${TMPDIR:-/tmp}). Needs python3 and /usr/bin/time.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ $# -ge 1 ]]; then
  bin="$1"
else
  bin="$(bench_build swthrottle)"
fi
bench_need_executable "$bin"
bench_need_time

lines="${BENCH_LINES:-2000000}"
repeat="${BENCH_REPEAT:-3}"
seed="${BENCH_SEED:-1}"
big="${BENCH_BIG:-1000 10000 88000}"
counts=(8 100 1000)

bench_work_dir rulescale

bench_cached_log "$lines" "$seed"
# The first 1000 lines: the log's start, to time the first record of a run.
head -n 1000 "$log" >"$work/head.log"

for n in "${counts[@]}" $big; do
  [[ -s "$work/r$n.toml" ]] || python3 "$here/gen_rules.py" --rules "$n" --toml "$work/r$n.toml"
done

load_before="$(bench_load)"

# timed ID OUT CMD... : one run; appends "ID <tab> ns <tab> peak KiB <tab> CPU s" to times.tsv
# (CPU: user + system, which a shared machine disturbs less than wall time).
timed() {
  local id="$1" out="$2"
  shift 2
  local s e rc=0
  s="$(date +%s%N)"
  /usr/bin/time -f '%e %M %U %S' -o "$work/time.txt" "$@" >"$out" 2>"$work/$id.err" || rc=$?
  e="$(date +%s%N)"
  if [[ $rc -ne 0 ]]; then
    echo "rulescale.sh: $id failed (exit $rc): $*" >&2
    tail -n 5 "$work/$id.err" >&2
    exit 1
  fi
  local t
  t="$(tail -n1 "$work/time.txt")"
  printf '%s\t%s\t%s\t%s\n' "$id" "$((e - s))" "$(echo "$t" | cut -d' ' -f2)" \
    "$(echo "$t" | awk '{ print $3 + $4 }')" >>"$work/times.tsv"
}

sw=("$bin" --format json)

# Sanity, untimed: -j and the prefilter do not change the records (DESIGN.md §3).
cat "$log" >/dev/null
for n in "${counts[@]}"; do
  "${sw[@]}" -j 1 --rule "$work/r$n.toml" "$log" >"$work/out1-$n.json"
  "${sw[@]}" -j 2 --rule "$work/r$n.toml" "$log" >"$work/out2-$n.json"
  SWTHROTTLE_NO_PREFILTER=1 "${sw[@]}" -j 1 --rule "$work/r$n.toml" "$log" >"$work/outP-$n.json"
  same=same
  cmp -s "$work/out1-$n.json" "$work/out2-$n.json" || same=differ
  cmp -s "$work/out1-$n.json" "$work/outP-$n.json" || same=differ
  printf '%s\t%s\t%s\n' "$n" "$same" "$(wc -l <"$work/out1-$n.json")" >>"$work/sanity.tsv"
done

echo "rulescale.sh: timing, $repeat rounds ..." >&2
for ((round = 1; round <= repeat; round++)); do
  for n in "${counts[@]}"; do
    for j in 1 2; do
      timed "run-$n-j$j" /dev/null "${sw[@]}" -j "$j" --rule "$work/r$n.toml" "$log"
      # Start-up: the first 1000 lines hold the first records, so this is
      # the time to the first record, bounded above.
      timed "first-$n-j$j" /dev/null "${sw[@]}" -j "$j" --rule "$work/r$n.toml" "$work/head.log"
    done
    timed "check-$n" /dev/null "$bin" --check --rule "$work/r$n.toml"
  done
done
for n in $big; do
  timed "load-$n" /dev/null "$bin" --check --rule "$work/r$n.toml"
  # A set too large for RE2 (tens of thousands of patterns) is an error at
  # the start: reported in the table, not the end of the run.
  if ! "${sw[@]}" -j 2 --rule "$work/r$n.toml" /dev/null >/dev/null 2>"$work/start-$n.err"; then continue; fi
  timed "start-$n" /dev/null "${sw[@]}" -j 2 --rule "$work/r$n.toml" "$work/head.log"
done

load_after="$(bench_load)"

BENCH_CPU="$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n1 || true)"
BENCH_DATE="$(date '+%Y-%m-%d %H:%M %Z')"
export BENCH_CPU BENCH_DATE
python3 - "$work" "$log" "$lines" "$load_before" "$load_after" "$bin" "$big" <<'PY'
import os
import sys

work, log, lines, load_before, load_after, binary, big = sys.argv[1:]
lines = int(lines)
big = [int(n) for n in big.split()]
counts = (8, 100, 1000)

best, rss, cpu = {}, {}, {}
with open(os.path.join(work, "times.tsv")) as f:
    for row in f.read().splitlines():
        cid, ns, kib, cpu_s = row.split("\t")
        best[cid] = min(best.get(cid, float("inf")), int(ns) / 1e9)
        rss[cid] = max(rss.get(cid, 0), int(kib))
        cpu[cid] = min(cpu.get(cid, float("inf")), float(cpu_s))
sanity = {}
with open(os.path.join(work, "sanity.tsv")) as f:
    for row in f.read().splitlines():
        n, same, records = row.split("\t")
        sanity[int(n)] = (same, int(records))


def mib(kib):
    return kib / 1024


print("## Rule-set scale")
print()
print("Log: %d lines, %.1f MB (%s). Seconds: the fastest of the runs; peak RSS: the largest."
      " First record: the same rules on the log's first 1000 lines (start-up, then one record or more)."
      % (lines, os.path.getsize(log) / 1e6, os.path.basename(log)))
print()
print("| rules | -j 1 s | -j 2 s | -j 1 vs 8 rules | -j 2 vs 8 rules | -j 1 CPU vs 8 | `--check` s"
      " | first record -j 1 s | first record -j 2 s (CPU s) | peak RSS -j 2 MiB | records | -j 1 = -j 2 = no prefilter |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
for n in counts:
    r1, r2 = best["run-%d-j1" % n], best["run-%d-j2" % n]
    print("| %d | %.3f | %.3f | %.2fx | %.2fx | %.2fx | %.3f | %.3f | %.3f (%.2f) | %.1f | %d | %s |"
          % (n, r1, r2, r1 / best["run-8-j1"], r2 / best["run-8-j2"], cpu["run-%d-j1" % n] / cpu["run-8-j1"],
             best["check-%d" % n], best["first-%d-j1" % n], best["first-%d-j2" % n], cpu["first-%d-j2" % n],
             mib(rss["run-%d-j2" % n]), sanity[n][1],
             "identical" if sanity[n][0] == "same" else "**DIFFER**"))

print()
print("### Loading a large rules file")
print()
print("| rules | file MB | `--check` s | CPU s | peak RSS MiB | first record `-j 2` s | CPU s | peak RSS MiB |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for n in big:
    size = os.path.getsize(os.path.join(work, "r%d.toml" % n)) / 1e6
    start = "start-%d" % n
    if start in best:
        run = "%.2f | %.2f | %.1f" % (best[start], cpu[start], mib(rss[start]))
    else:
        run = "fails: %s | — | —" % open(os.path.join(work, start + ".err")).read().strip().splitlines()[-1]
    print("| %d | %.1f | %.2f | %.2f | %.1f | %s |"
          % (n, size, best["load-%d" % n], cpu["load-%d" % n], mib(rss["load-%d" % n]), run))

print()
print("### Targets (issue #17 item 2)")
print()


def verdict(ok, text):
    return ("PASS " if ok else "**MISS** ") + text


for j in (1, 2):
    ratio = best["run-1000-j%d" % j] / best["run-8-j%d" % j]
    print("- 1000 rules at most 3x the time of 8, -j %d: " % j
          + verdict(ratio <= 3.0, "%.2fx (%+.2fx against the target)" % (ratio, ratio - 3.0)))
start = max(best["first-1000-j1"], best["first-1000-j2"])
print("- 1000 rules start up in under a second (first record, -j 1 and -j 2): "
      + verdict(start < 1.0, "%.3f s" % start))
print()
print("Machine: %s, nproc %d; %s; load average %s before the run, %s after; binary %s."
      % (os.environ.get("BENCH_CPU") or "unknown CPU", os.cpu_count(), os.environ.get("BENCH_DATE"),
         load_before, load_after, binary))
PY
