#!/usr/bin/env bash
# Runs the window micro benchmarks (tests/bench/window_bench.cpp) and prints a
# Markdown table, the machine, and the targets of docs/PERFORMANCE.md (Window core).
#
#   tests/bench/run_window_bench.sh                   build build-bench/ (Release), then run
#   tests/bench/run_window_bench.sh BINARY [ARGS...]  run BINARY; ARGS go to Google Benchmark
#                                                     (e.g. --benchmark_filter=Flood)
#
# SWTHROTTLE_BENCH_MAX_THREADS=N (default 2) runs 1, 2, 4 .. N threads.
# Figures are only as quiet as the machine: the load average before the run is
# printed with them.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ $# -ge 1 ]]; then
  bin="$1"
  shift
else
  bin="$(bench_build swthrottle_bench -DSWTHROTTLE_BENCH=ON)"
fi
bench_need_executable "$bin" "CMake builds swthrottle_bench only when Google Benchmark is installed: libbenchmark-dev"

bench_work_dir window_bench
json="$work/bench.json"

load_before="$(bench_load)"
echo "run_window_bench.sh: running $bin (about 30 s) ..." >&2
"$bin" --benchmark_format=json "$@" >"$json"

BENCH_CPU="$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n1 || true)"
BENCH_NPROC="$(nproc)"
BENCH_CXX="$(g++ --version 2>/dev/null | head -n1 || echo unknown)"
BENCH_DATE="$(date '+%Y-%m-%d %H:%M %Z')"
BENCH_LOAD="$load_before"
export BENCH_CPU BENCH_NPROC BENCH_CXX BENCH_DATE BENCH_LOAD

python3 - "$json" <<'PY'
import json
import os
import sys

with open(sys.argv[1]) as f:
    doc = json.load(f)

TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}

runs = doc.get("benchmarks", [])
# With --benchmark_repetitions, report the medians; otherwise the single runs.
medians = [b for b in runs if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median"]
runs = medians or [b for b in runs if b.get("run_type", "iteration") == "iteration"]

rows = []
for b in runs:
    if "error_message" in b or "items_per_second" not in b:
        continue
    parts = b["run_name"].split("/")
    mode, keys = None, None
    for p in parts[1:]:
        if p in ("accurate", "efficient"):
            mode = p
        elif p.startswith("keys:"):
            keys = int(p[len("keys:"):])
    ips = b["items_per_second"]
    rows.append({
        "bench": parts[0],
        "mode": mode,
        "keys": keys,
        "threads": int(b["threads"]),
        "ns": 1e9 / ips,  # aggregate: wall time / operations of all threads
        "cpu_ns": b["cpu_time"] * TO_NS[b.get("time_unit", "ns")],  # CPU of all threads / operations
        "mops": ips / 1e6,
        "overshoot": b.get("overshoot"),
    })

if not rows:
    sys.exit("run_window_bench.sh: no benchmark results in the JSON output")

print("| benchmark | threads | keys | ns/op | cpu ns/op | M ops/s | overshoot |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for r in rows:
    name = r["bench"] + (" " + r["mode"] if r["mode"] else "")
    keys = "—" if r["keys"] is None else str(r["keys"])
    over = "—" if r["overshoot"] is None else "%d" % r["overshoot"]
    print("| %s | %d | %s | %.1f | %.1f | %.1f | %s |"
          % (name, r["threads"], keys, r["ns"], r["cpu_ns"], r["mops"], over))

ctx = doc.get("context", {})
print()
print("Machine: %s, nproc %s; %s; %s; load average before the run %s."
      % (os.environ.get("BENCH_CPU") or "unknown CPU", os.environ.get("BENCH_NPROC"),
         os.environ.get("BENCH_CXX"), os.environ.get("BENCH_DATE"), os.environ.get("BENCH_LOAD")))
print("ns/op is wall time per operation over all threads (UseRealTime); cpu ns/op is the CPU time of")
print("all threads per operation. With more threads than free cores, both measure per-op cost, not scaling.")
if ctx.get("library_build_type") == "debug":
    print("(The Google Benchmark library itself was built as debug; this affects its harness, not the code measured.)")


def find(bench, mode, keys, threads):
    for r in rows:
        if r["bench"] == bench and r["mode"] == mode and r["keys"] == keys and r["threads"] == threads:
            return r
    return None


base = find("BM_AtomicFetchAdd", None, None, 1)
targets = [
    ("efficient add, 1 thread", ("BM_Add", "efficient", 1, 1), 10.0),
    ("accurate add-and-decide, 1 thread", ("BM_DecideBelowThreshold", "accurate", 1, 1), 20.0),
    ("efficient flood decision, 1 thread", ("BM_DecideFlood", "efficient", 1, 1), 10.0),
    ("efficient flood decision, 2 threads", ("BM_DecideFlood", "efficient", 1, 2), 10.0),
]
print()
print("Targets (docs/PERFORMANCE.md; hot key; ratio against one std::atomic fetch_add, 1 thread%s):"
      % (", %.1f ns/op" % base["ns"] if base else ": not run"))
print()
for label, key, limit in targets:
    r = find(*key)
    if r is None:
        print("- %s <= %.0f ns/op: NOT RUN" % (label, limit))
        continue
    verdict = "PASS" if r["ns"] <= limit else "MISS"
    ratio = ", %.1fx atomic" % (r["ns"] / base["ns"]) if base else ""
    print("- %s <= %.0f ns/op: %s, %.1f ns/op (cpu %.1f ns/op%s)"
          % (label, limit, verdict, r["ns"], r["cpu_ns"], ratio))
PY
