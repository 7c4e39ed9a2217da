#!/usr/bin/env bash
# End-to-end throughput of swthrottle against cat | wc -l, grep and ripgrep on one
# realistic log (issue #5), then the curves over rule count and key count, the
# targets, and the machine. Prints Markdown.
#
#   tests/bench/throughput.sh            build build-bench/ (Release), then run
#   tests/bench/throughput.sh BINARY     run BINARY (a Release swthrottle)
#
# BENCH_LINES=N   lines per log (default 2000000; 200000 for a quick look)
# BENCH_REPEAT=N  runs per command, the fastest counts (default 3)
# BENCH_SEED=N    seed of the generated logs (default 1)
#
# The logs (tests/bench/gen_log.py: about 120 bytes a line, so 3 x 240 MB by default,
# one per IP pool size) are written to ${TMPDIR:-/tmp} and reused by later runs with the same
# parameters and the same generator. Needs python3 and /usr/bin/time (Debian: the
# `time` package); ripgrep (`rg`) is compared when installed.
#
# Every command reads the log from the page cache (it is read once before timing).
# Seconds are wall time taken around /usr/bin/time, whose %M gives the peak RSS.
# grep and rg write their count to a file: GNU grep stops at the first match
# when its output is /dev/null. Figures are only as quiet as the machine: the load
# average before and after is printed with them.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/tests/bench"

if [[ $# -ge 1 ]]; then
  bin="$1"
else
  cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release >&2
  cmake --build "$root/build-bench" --target swthrottle >&2
  bin="$root/build-bench/swthrottle"
fi
if [[ ! -x "$bin" ]]; then
  echo "throughput.sh: no swthrottle binary at $bin" >&2
  exit 1
fi
if [[ ! -x /usr/bin/time ]]; then
  echo "throughput.sh: needs /usr/bin/time for the peak RSS (Debian: apt-get install time)" >&2
  exit 1
fi
have_rg=0
if command -v rg >/dev/null 2>&1; then have_rg=1; fi

lines="${BENCH_LINES:-2000000}"
repeat="${BENCH_REPEAT:-3}"
seed="${BENCH_SEED:-1}"
nproc_="$(nproc)"
main_keys=10000

work="$(mktemp -d "${TMPDIR:-/tmp}/throughput.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# Logs: one per IP pool size; the main table uses the 10^4 pool. The name holds every
# parameter and a hash of the generators, so a stale log is never reused.
gen_hash="$(cat "$here/gen_log.py" "$here/gen_rules.py" | sha1sum | cut -c1-8)"
log_for() { echo "${TMPDIR:-/tmp}/swthrottle-bench-${lines}l-${1}k-s${seed}-${gen_hash}.log"; }
for k in 1 10000 100000; do
  f="$(log_for "$k")"
  if [[ ! -s "$f" ]]; then
    echo "throughput.sh: writing $f ($lines lines, $k addresses) ..." >&2
    python3 "$here/gen_log.py" --out "$f" --lines "$lines" --keys "$k" --seed "$seed"
  fi
done
log="$(log_for "$main_keys")"

for n in 8 32 64; do
  python3 "$here/gen_rules.py" --rules "$n" --toml "$work/r$n.toml" --patterns "$work/p$n.txt"
done
python3 "$here/gen_rules.py" --rules 8 --client-key --toml "$work/rk.toml"
kinds="ordinary ordinary2 spike distinct new"
for kind in $kinds all; do
  python3 "$here/gen_rules.py" --rules 8 --kind "$kind" --toml "$work/k-$kind.toml"
done

load_before="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"

# timed ID OUT CMD... : one run; appends "ID <tab> ns <tab> peak KiB" to times.tsv and
# keeps the command's stderr in ID.err. Exit status 1 is "no match" for grep and rg.
timed() {
  local id="$1" out="$2"
  shift 2
  local s e rc=0
  s="$(date +%s%N)"
  /usr/bin/time -f '%e %M' -o "$work/time.txt" "$@" >"$out" 2>"$work/$id.err" || rc=$?
  e="$(date +%s%N)"
  if [[ $rc -gt 1 ]]; then
    echo "throughput.sh: $id failed (exit $rc): $*" >&2
    cat "$work/$id.err" >&2
    exit 1
  fi
  printf '%s\t%s\t%s\n' "$id" "$((e - s))" "$(tail -n1 "$work/time.txt" | cut -d' ' -f2)" >>"$work/times.tsv"
}

sw=("$bin" --format json --stats)

# Sanity, untimed: the same lines are counted by every tool, and -j does not change
# the records (DESIGN.md §3). Also puts the logs in the page cache.
for k in 1 10000 100000; do cat "$(log_for "$k")" >/dev/null; done
LC_ALL=C grep -cE -f "$work/p8.txt" "$log" >"$work/count.grep" || true
if [[ $have_rg == 1 ]]; then
  env -u RIPGREP_CONFIG_PATH rg -c -f "$work/p8.txt" "$log" >"$work/count.rg" || true
fi
"${sw[@]}" -j 1 --rule "$work/r8.toml" "$log" >"$work/out1.json" 2>"$work/sanity.err"
"${sw[@]}" -j "$nproc_" --rule "$work/r8.toml" "$log" >"$work/outN.json" 2>/dev/null
if cmp -s "$work/out1.json" "$work/outN.json"; then echo same >"$work/jsame"; else echo differ >"$work/jsame"; fi
SWTHROTTLE_NO_PREFILTER=1 "${sw[@]}" -j 1 --rule "$work/r8.toml" "$log" >"$work/outP.json" 2>/dev/null
if cmp -s "$work/out1.json" "$work/outP.json"; then echo same >"$work/psame"; else echo differ >"$work/psame"; fi
# The rule kinds of issue 29 (spike, distinct, new) decide the same at every -j too.
"${sw[@]}" -j 1 --rule "$work/k-all.toml" "$log" >"$work/kind1.json" 2>/dev/null
"${sw[@]}" -j "$nproc_" --rule "$work/k-all.toml" "$log" >"$work/kindN.json" 2>/dev/null
if cmp -s "$work/kind1.json" "$work/kindN.json"; then echo same >"$work/ksame"; else echo differ >"$work/ksame"; fi
wc -l <"$work/kind1.json" >"$work/krecords"
wc -l <"$work/out1.json" >"$work/records"

echo "throughput.sh: timing, $repeat rounds ..." >&2
for ((round = 1; round <= repeat; round++)); do
  # shellcheck disable=SC2016  # $1 is for the inner shell
  timed wc "$work/count.wc" bash -c 'cat "$1" | wc -l' _ "$log"
  for n in 8 32 64; do
    timed "grep$n" "$work/count.grep$n" env LC_ALL=C grep -cE -f "$work/p$n.txt" "$log"
    if [[ $have_rg == 1 ]]; then
      timed "rg$n" "$work/count.rg$n" env -u RIPGREP_CONFIG_PATH rg -c -f "$work/p$n.txt" "$log"
    fi
    timed "sw1-$n" /dev/null "${sw[@]}" -j 1 --rule "$work/r$n.toml" "$log"
  done
  timed swN-8 /dev/null "${sw[@]}" -j "$nproc_" --rule "$work/r8.toml" "$log"
  timed sw1-8-plain /dev/null env SWTHROTTLE_NO_PREFILTER=1 "${sw[@]}" -j 1 --rule "$work/r8.toml" "$log"
  for k in 1 10000 100000; do
    timed "key$k" /dev/null "${sw[@]}" -j 1 --rule "$work/rk.toml" "$(log_for "$k")"
  done
  for kind in $kinds; do
    timed "kind-$kind" /dev/null "${sw[@]}" -j 1 --rule "$work/k-$kind.toml" "$log"
  done
done

load_after="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"

BENCH_CPU="$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n1 || true)"
BENCH_DATE="$(date '+%Y-%m-%d %H:%M %Z')"
export BENCH_CPU BENCH_DATE
python3 - "$work" "$log" "$lines" "$nproc_" "$have_rg" "$main_keys" "$load_before" "$load_after" "$bin" <<'PY'
import os
import re
import sys

work, log, lines, nproc, have_rg, main_keys, load_before, load_after, binary = sys.argv[1:]
lines, nproc, have_rg, main_keys = int(lines), int(nproc), have_rg == "1", int(main_keys)
size = os.path.getsize(log)


def read(name):
    with open(os.path.join(work, name)) as f:
        return f.read()


best, rss = {}, {}
for row in read("times.tsv").splitlines():
    cid, ns, kib = row.split("\t")
    best[cid] = min(best.get(cid, float("inf")), int(ns) / 1e9)
    rss[cid] = max(rss.get(cid, 0), int(kib))


def stats(cid):
    """(matched, total keys, evictions) from a run's --stats."""
    text = read(cid + ".err")
    m = re.search(r"stats: lines \d+ matched (\d+)", text)
    keys = sum(int(k) for k in re.findall(r" keys (\d+) evicted", text))
    ev = sum(int(k) for k in re.findall(r" evicted (\d+)", text))
    return (int(m.group(1)) if m else None), keys, ev


def count(name):
    try:
        return int(read(name).strip() or 0)
    except (FileNotFoundError, ValueError):
        return None


def mib(kib):
    return kib / 1024


def lps(s):
    return "%.2f M" % (lines / s / 1e6)


grep_s = best["grep8"]
rg_s = best.get("rg8")
rows = [("`cat FILE \\| wc -l`", "wc"), ("`LC_ALL=C grep -cE -f PATTERNS` (8)", "grep8")]
if have_rg:
    rows.append(("`rg -c -f PATTERNS` (8)", "rg8"))
rows += [("swthrottle `-j 1` (8 rules)", "sw1-8"), ("swthrottle `-j %d` (8 rules)" % nproc, "swN-8"),
         ("swthrottle `-j 1`, RE2 alone (`SWTHROTTLE_NO_PREFILTER=1`)", "sw1-8-plain")]

print("## swthrottle throughput")
print()
print("Log: %d lines, %.1f MB (%s), %d source addresses. Seconds: the fastest of the runs;"
      " peak RSS: the largest; MB = 10^6 bytes; ratio = that command's speed / grep's (rg's):"
      " above 1 is faster. rg maps the file, so its RSS counts the page-cached log."
      % (lines, size / 1e6, os.path.basename(log), main_keys))
print()
print("| command | seconds | lines/s | MB/s | peak RSS MiB | ratio vs grep | ratio vs rg |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for label, cid in rows:
    s = best[cid]
    vs_rg = "%.2fx" % (rg_s / s) if rg_s else "—"
    print("| %s | %.3f | %s | %.0f | %.1f | %.2fx | %s |"
          % (label, s, lps(s), size / 1e6 / s, mib(rss[cid]), grep_s / s, vs_rg))

grep_n, rg_n, wc_n = count("count.grep"), count("count.rg"), count("count.wc")
matched, keys8, _ = stats("sanity")
records = count("records")
print()
print("Sanity: `wc -l` %s lines; lines matching the 8 patterns: grep %s, rg %s, swthrottle `--stats` matched %s"
      " (%.1f %% of the lines) — %s; %s JSON records written; `-j 1` and `-j %d` records %s;"
      " with and without the prefilter %s."
      % (wc_n, grep_n, rg_n if have_rg else "—", matched, 100.0 * (matched or 0) / lines,
         "agree" if grep_n == matched and (not have_rg or rg_n == grep_n) else "**DISAGREE**",
         records, nproc, "identical" if read("jsame").strip() == "same" else "**differ**",
         "identical" if read("psame").strip() == "same" else "**differ**"))

print()
print("### Rules (`-j 1`; rules 9..64 match rarely)")
print()
print("| rules | seconds | lines/s | MB/s | peak RSS MiB | time vs 8 rules | grep -cE s | rg -c s | matched (grep) |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for n in (8, 32, 64):
    cid = "sw1-%d" % n
    s = best[cid]
    m, _, _ = stats(cid)
    print("| %d | %.3f | %s | %.0f | %.1f | %.2fx | %.3f | %s | %s (%s) |"
          % (n, s, lps(s), size / 1e6 / s, mib(rss[cid]), s / best["sw1-8"], best["grep%d" % n],
             "%.3f" % best["rg%d" % n] if have_rg else "—", m, count("count.grep%d" % n)))

print()
print("### Keys (`-j 1`; the 8 rules + one rule keyed by HTTP client address)")
print()
print("| address pool | keys held | evicted | seconds | lines/s | peak RSS MiB |")
print("| ---: | ---: | ---: | ---: | ---: | ---: |")
held = {}
for k in (1, 10000, 100000):
    cid = "key%d" % k
    _, keys, ev = stats(cid)
    held[k] = keys
    print("| %d | %d | %d | %.3f | %s | %.1f |" % (k, keys, ev, best[cid], lps(best[cid]), mib(rss[cid])))
d_rss = (rss["key100000"] - rss["key1"]) * 1024
per_key = d_rss / max(1, held[100000] - held[1])
print()
print("Bytes per idle key: (RSS(10^5 pool) - RSS(1 address)) / keys added = %d B / %d = **%.0f B**"
      " (divided by 10^5 instead: %.0f B)." % (d_rss, held[100000] - held[1], per_key, d_rss / 1e5))

print()
print("### Rule kinds (`-j 1`; the 8 rules + rules over every HTTP access line, by client address)")
print()
print("| rules added | seconds | lines/s | peak RSS MiB | time vs 8 rules | added time, in ordinary rules |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
base = best["sw1-8"]
one = max(best["kind-ordinary"] - base, 1e-9)
kind_rows = [("one ordinary rule (`threshold`, `key`)", "ordinary"), ("two ordinary rules", "ordinary2"),
             ("a spike (`previous()` in `when`, `key`)", "spike"),
             ("a distinct count of addresses (`distinct`)", "distinct"), ("first-seen addresses (`new`)", "new")]
for label, kind in kind_rows:
    s = best["kind-" + kind]
    print("| %s | %.3f | %s | %.1f | %.2fx | %.2f |"
          % (label, s, lps(s), mib(rss["kind-" + kind]), s / base, (s - base) / one))
print()
print("Sanity: the three new kinds in one rules file write %s records; `-j 1` and `-j %d` records %s."
      % (count("krecords"), nproc, "identical" if read("ksame").strip() == "same" else "**differ**"))

print()
print("### Targets (issues #5 and #17)")
print()


def verdict(ok, value, text):
    return "%s %s" % ("PASS" if ok else "**MISS**", text % value)


sw1, swn = best["sw1-8"], best["swN-8"]
peak = max(rss["sw1-8"], rss["swN-8"])
r1 = grep_s / sw1
print("- swthrottle -j 1 >= 1.0x grep: " + verdict(r1 >= 1.0, r1, "%.2fx")
      + " (%+.0f %% against the target)" % ((r1 - 1.0) * 100))
if have_rg:
    rn = rg_s / swn
    print("- swthrottle -j %d >= 1.5x rg: " % nproc + verdict(rn >= 1.5, rn, "%.2fx")
          + " (%+.0f %% against the target)" % ((rn / 1.5 - 1.0) * 100))
else:
    print("- swthrottle -j %d >= 1.5x rg: NOT RUN (rg is not installed)" % nproc)
print("- peak RSS <= 64 MiB: " + verdict(peak <= 64 * 1024, mib(peak), "%.1f MiB")
      + " (%+.1f MiB against the target)" % (mib(peak) - 64))
slow = best["sw1-64"] / sw1
print("- 64 rules at most 2x slower than 8: " + verdict(slow <= 2.0, slow, "%.2fx")
      + " (%+.2fx against the target)" % (slow - 2.0))
print("- <= 256 bytes per idle key at 10^5 keys: " + verdict(per_key <= 256, per_key, "%.0f B")
      + " (%+.0f B against the target)" % (per_key - 256))
two = best["kind-ordinary2"]
for label, kind in kind_rows[2:]:
    s = best["kind-" + kind]
    print("- %s costs no more than two ordinary rules (issue 29): " % label
          + verdict(s <= two, s / two, "%.2fx the time of the 8 rules + two ordinary rules"))

print()
print("Machine: %s, nproc %d; %s; load average %s before the run, %s after; binary %s."
      % (os.environ.get("BENCH_CPU") or "unknown CPU", nproc, os.environ.get("BENCH_DATE"),
         load_before, load_after, binary))
PY
