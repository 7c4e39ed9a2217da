#!/usr/bin/env bash
# What fleet windows (man page FLEET) cost, against a redis-server this script
# starts on a unix socket and a TCP port of its own (no persistence), and
# against what Redis does for one client (redis-benchmark, same server, same
# run). Prints Markdown.
#
#   tests/bench/fleet.sh BINARY      a Release swthrottle
#
# 1. Lines/s on the generated log (gen_log.py, `time = "log"`, -j 1), each rule
#    host-local, with `fleet = "exact"` and with `fleet = "batched"`: a throttle
#    rule that matches nothing, one that matches ~0.1 % of the lines, one that
#    matches ~10 % (the 8 alert patterns as its events), and an alert rule on
#    the same ~10 %. Exact mode is one Redis round trip per matched event;
#    batched alerts flush per-window deltas every `sync` (and after Y/8 unsent
#    events), batched throttles pass by leases of up to Y/8 permits. For every
#    run: Redis's EVALSHA calls and CPU (INFO commandstats and INFO cpu, before
#    and after), per 10^4 matched events.
# 2. Exact decisions/s: a log whose every line matches a fleet throttle rule,
#    BENCH_DECISIONS lines in all.
#    a. Pipeline depth: one process, `time = "arrival"`, the decisions split
#       over 1, 64 and 256 input files; each file has a decider thread of its
#       own, so N files keep up to N requests in flight in the one pipeline of
#       the process's fleet thread.
#    b. Hosts: 1, 2 and 4 processes at once on one namespace (each reads its
#       share: the first DECISIONS/N lines), over the socket and over TCP.
#    Both with redis-server's CPU per 1000 decisions (INFO cpu) and EVALSHA's
#    usec_per_call (INFO commandstats, reset before each run).
#    c. Batched flushes in a steady flood: one process, `time = "arrival"`, a
#       batched alert keyed by BENCH_KEYS keys, fed one line per key every 50 ms
#       for BENCH_FLUSH_SECONDS (fleet_pace.py): BENCH_KEYS windows flushed
#       every `sync`, as a live host does. A replay (part 1) moves the windows by
#       many buckets per flush, which a live host never does.
# 3. The reference: redis-benchmark -c 1 (serial) INCR and a one-line Lua EVAL,
#    and INCR with -P 64, on the same server.
# 4. A capacity model from the measured Redis CPU per script: matched events/s
#    one Redis core serves in exact mode, windows x flushes/s (hosts x keys at
#    the default sync of 250 ms, from part 2c) and leases/s in batched mode.
#
# BENCH_LINES=N      lines of the generated log of part 1 (default 1000000)
# BENCH_REPEAT=N     runs per command, the fastest counts (default 3)
# BENCH_DECISIONS=N  decisions per run in part 2 (default 50000)
# BENCH_DEPTHS="..." input files (pipeline depths) of part 2a (default "1 64 256")
# BENCH_KEYS=N       keys (windows) of part 2c (default 1000)
# BENCH_FLUSH_SECONDS=N  seconds of flood in part 2c (default 3)
# BENCH_SEED=N       seed of the generated log (default 1)
#
# The part 1 log is written to ${TMPDIR:-/tmp} and reused by later runs with the
# same parameters (the naming of throughput.sh). Needs redis-server, redis-cli,
# redis-benchmark (Debian: redis-server, redis-tools), python3 and /usr/bin/time.
# Wall time; every fleet run gets a namespace of its own, so no run finds
# another's windows. A run where any request went unanswered (timeouts, Redis
# degraded: decided locally) is flagged in the table, since its speed is not the
# fleet's. The Redis figures of part 1 are summed over every round (a run is
# short: one round's CPU is a few clock ticks). The load average before and
# after is printed with the figures.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_binary_arg "tests/bench/fleet.sh BINARY" "$@"
lines="${BENCH_LINES:-1000000}"
repeat="${BENCH_REPEAT:-3}"
decisions="${BENCH_DECISIONS:-50000}"
depths="${BENCH_DEPTHS:-1 64 256}"
keys="${BENCH_KEYS:-1000}"
flush_seconds="${BENCH_FLUSH_SECONDS:-3}"
seed="${BENCH_SEED:-1}"
bench_need_tools redis-server redis-cli redis-benchmark python3
bench_need_time

bench_work_dir fleet-bench
redis_pid=""
cleanup() {
  if [[ -n "$redis_pid" ]]; then
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# --- redis-server: a unix socket and a free TCP port on 127.0.0.1 -------------
sock="$work/redis.sock"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
redis-server --bind 127.0.0.1 --port "$port" --unixsocket "$sock" --unixsocketperm 700 \
  --save '' --appendonly no --dir "$work" --logfile "$work/redis.log" --daemonize no &
redis_pid=$!
rcli() { redis-cli -s "$sock" "$@" | tr -d '\r'; }
for ((i = 0; i < 100; i++)); do
  [[ "$(redis-cli -s "$sock" ping 2>/dev/null)" == PONG ]] && break
  kill -0 "$redis_pid" 2>/dev/null || { echo "fleet.sh: redis-server exited:" >&2; cat "$work/redis.log" >&2; exit 1; }
  sleep 0.1
done
[[ "$(redis-cli -s "$sock" ping 2>/dev/null)" == PONG ]] || { echo "fleet.sh: redis-server does not answer PING" >&2; exit 1; }
[[ "$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null)" == PONG ]] || { echo "fleet.sh: redis-server does not answer on TCP port $port" >&2; exit 1; }
redis_version="$(rcli info server | sed -n 's/^redis_version://p')"
redis_cpu() { rcli info cpu | awk -F: '/^used_cpu_(sys|user):/ { s += $2 } END { printf "%.6f", s }'; }
# counters : "redis CPU s <tab> evalsha calls <tab> evalsha usec", cumulative
# since the last CONFIG RESETSTAT (INFO cpu is never reset).
counters() {
  local st
  st="$(rcli info commandstats | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),usec=\([0-9]*\),.*/\1\t\2/p')"
  printf '%s\t%s\n' "$(redis_cpu)" "${st:-0	0}"
}

# --- logs ----------------------------------------------------------------------
bench_cached_log "$lines" "$seed"
cat "$log" >/dev/null
# Part 2: every line matches (ERROR), 1 ms apart; the log for N processes holds
# the first DECISIONS/N lines, so that each run makes DECISIONS decisions in all.
python3 - "$work" "$decisions" $depths <<'PY'
import datetime, sys
work, n, depths = sys.argv[1], int(sys.argv[2]), [int(d) for d in sys.argv[3:]]
start = datetime.datetime(2026, 11, 21, 10, 0, 0, tzinfo=datetime.timezone.utc)
lines = []
for i in range(n):
    t = start + datetime.timedelta(milliseconds=i)
    lines.append("%s.%03dZ ERROR [main] c.e.storage.SegmentWriter: write failed: disk full n=%d\n"
                 % (t.strftime("%Y-%m-%dT%H:%M:%S"), i % 1000, i))
for procs in (1, 2, 4):
    with open("%s/all-%d.log" % (work, procs), "w") as f:
        f.writelines(lines[: n // procs])
# Part 2a: N files of DECISIONS/N lines each (time = "arrival": the stamps do not matter).
for d in depths:
    for i in range(d):
        with open("%s/depth-%d-%d.log" % (work, d, i), "w") as f:
            f.writelines(lines[i * (n // d): (i + 1) * (n // d)])
PY

# --- rules ---------------------------------------------------------------------
# rules FILE NAME KIND MODE URL TIME Y EVENT_PATTERN... : one rule of KIND
# (throttle or alert, `Y per 1m`), one event per pattern; MODE "" (host-local),
# exact or batched: `fleet = MODE` and a [fleet] table on URL. TIME log or
# arrival (arrival: no [settings] time, the default).
rules() {
  local file="$1" name="$2" kind="$3" mode="$4" url="$5" time="$6" y="$7"
  shift 7
  {
    [[ "$time" == log ]] && printf '[settings]\ntime     = "log"\ntimezone = "UTC"\nyear     = 2026\n\n'
    [[ -n "$mode" ]] && printf '[fleet]\nredis     = "%s"\nnamespace = "bench"\n\n' "$url"
    printf '[[rule]]\nname      = "%s"\nkind      = "%s"\nthreshold = "%s per 1m"\n' "$name" "$kind" "$y"
    [[ -n "$mode" ]] && printf 'fleet     = "%s"\n' "$mode"
    local i=0 p
    for p in "$@"; do
      i=$((i + 1))
      printf "  [[rule.event]]\n  name  = \"e%d\"\n  match = '%s'\n" "$i" "$p"
    done
  } >"$file"
}
# The 8 alert patterns of gen_rules.py (about 10 % of the lines), as events of one rule.
mapfile -t dense < <(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import gen_rules
for _, p, _, _ in gen_rules.BASE_RULES: print(p)' "$here")
rare='OutOfMemoryError: Java heap space'
none='OutOfMemoryError: Metaspace'  # in no line of gen_log.py's logs
unix_url="unix:$sock"
tcp_url="redis://127.0.0.1:$port/0"
# alert8k: the dense alert with Y = 8000, so that a batched host flushes early
# (after Y/8 unsent events) 1000 events apart instead of 12 (no exact run: it
# costs what the Y = 100 one does).
cases=(none rare dense alert alert8k)
modes=(local exact batched)
for mode in "${modes[@]}"; do
  m="$mode"
  [[ "$m" == local ]] && m=""
  rules "$work/none-$mode.toml" none throttle "$m" "$unix_url" log 100 "$none"
  rules "$work/rare-$mode.toml" rare throttle "$m" "$unix_url" log 100 "$rare"
  rules "$work/dense-$mode.toml" dense throttle "$m" "$unix_url" log 100 "${dense[@]}"
  rules "$work/alert-$mode.toml" alert alert "$m" "$unix_url" log 100 "${dense[@]}"
  rules "$work/alert8k-$mode.toml" alert alert "$m" "$unix_url" log 8000 "${dense[@]}"
done
rules "$work/all-unix.toml" all throttle exact "$unix_url" log 100 'ERROR'
rules "$work/all-tcp.toml" all throttle exact "$tcp_url" log 100 'ERROR'
rules "$work/depth.toml" all throttle exact "$unix_url" arrival 100 'ERROR'
# Part 2c: Y so large that no flush is early (Y/8 = 125000): one per window per sync.
rules "$work/keyed.toml" keyed alert batched "$unix_url" arrival 1000000 'ERROR .* key=(?P<k>[0-9]+)'
sed -i 's/^fleet     = "batched"$/&\nkey       = "{k}"/' "$work/keyed.toml"

# --- timing --------------------------------------------------------------------
fail() { echo "fleet.sh: $1" >&2; shift; for f in "$@"; do cat "$f" >&2; done; exit 1; }

# answers FILE : "answered <tab> unanswered" from the fleet line of a run's --stats
# (0 0 without one).
answers() {
  sed -n 's/.*stats: fleet: .* answered \([0-9]*\) unanswered \([0-9]*\) .*/\1\t\2/p' "$1" | grep . || printf '0\t0\n'
}

# delta BEFORE AFTER : the counters' difference, "redis CPU s <tab> calls <tab> usec".
delta() {
  awk -F'\t' -v a="$1" -v b="$2" 'BEGIN { split(a, x, "\t"); split(b, y, "\t");
    printf "%.6f\t%d\t%d\n", y[1] - x[1], y[2] - x[2], y[3] - x[3] }'
}

# timed ID CMD... : one run; appends "ID <tab> wall ns <tab> CPU s <tab> answered
# <tab> unanswered <tab> redis CPU s <tab> evalsha calls <tab> evalsha usec" to
# times.tsv, keeps the run's stderr (--stats) in ID.err (the last round's).
timed() {
  local id="$1"
  shift
  local s e rc=0 c0 c1
  c0="$(counters)"
  s="$(date +%s%N)"
  /usr/bin/time -f '%U %S' -o "$work/$id.time" "$@" >/dev/null 2>"$work/$id.err" || rc=$?
  e="$(date +%s%N)"
  c1="$(counters)"
  [[ $rc -eq 0 ]] || fail "$id failed (exit $rc): $*" "$work/$id.err"
  printf '%s\t%s\t%s\t%s\t%s\n' "$id" "$((e - s))" "$(tail -n1 "$work/$id.time" | awk '{ print $1 + $2 }')" \
    "$(answers "$work/$id.err")" "$(delta "$c0" "$c1")" >>"$work/times.tsv"
}

sw=("$bin" -j 1 --stats)
run=0

# hosts ID N RULES : N swthrottle processes at once on one fresh namespace, each
# on all-N.log; appends "ID <tab> wall ns <tab> their CPU s <tab> redis CPU s
# <tab> evalsha calls <tab> evalsha usec <tab> answered <tab> unanswered <tab>
# their context switches" to hosts.tsv, their stderr in ID-I.err.
# hosts ID 1 RULES FILE... : one process on the given files instead (part 2a).
hosts() {
  local id="$1" n="$2" rules_file="$3"
  shift 3
  local s e c0 c1 i cpu=0 csw=0 ans=0 unans=0 a u pids=()
  run=$((run + 1))
  rcli config resetstat >/dev/null
  c0="$(redis_cpu)"
  s="$(date +%s%N)"
  for ((i = 1; i <= n; i++)); do
    local inputs=("$work/all-$n.log")
    [[ $# -gt 0 ]] && inputs=("$@")
    /usr/bin/time -f '%U %S %w %c' -o "$work/$id-$i.time" "${sw[@]}" -r "$rules_file" --fleet-host "h$i" \
      --fleet-namespace "d$run" "${inputs[@]}" >/dev/null 2>"$work/$id-$i.err" &
    pids+=($!)
  done
  for ((i = 1; i <= n; i++)); do
    wait "${pids[$((i - 1))]}" || fail "$id: process $i failed" "$work/$id-$i.err"
  done
  e="$(date +%s%N)"
  c1="$(redis_cpu)"
  for ((i = 1; i <= n; i++)); do
    cpu="$(tail -n1 "$work/$id-$i.time" | awk -v c="$cpu" '{ print c + $1 + $2 }')"
    csw="$(tail -n1 "$work/$id-$i.time" | awk -v c="$csw" '{ print c + $3 + $4 }')"
    IFS=$'\t' read -r a u < <(answers "$work/$id-$i.err")
    ans=$((ans + a)) unans=$((unans + u))
  done
  local stat
  stat="$(rcli info commandstats | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),usec=\([0-9]*\),.*/\1\t\2/p')"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$((e - s))" "$cpu" \
    "$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" "${stat:-0	0}" "$ans" "$unans" "$csw" >>"$work/hosts.tsv"
}

# flood ID : part 2c, one paced run; appends "ID <tab> wall ns <tab> CPU s <tab>
# answered <tab> unanswered <tab> redis CPU s <tab> evalsha calls <tab> evalsha
# usec <tab> flushes" to flood.tsv.
flood() {
  local id="$1" s e c0 c1 rc=0
  run=$((run + 1))
  c0="$(counters)"
  s="$(date +%s%N)"
  python3 "$here/fleet_pace.py" "$keys" "$flush_seconds" |
    /usr/bin/time -f '%U %S' -o "$work/$id.time" "${sw[@]}" -r "$work/keyed.toml" --fleet-namespace "f$run" \
      >/dev/null 2>"$work/$id.err" || rc=$?
  e="$(date +%s%N)"
  c1="$(counters)"
  [[ $rc -eq 0 ]] || fail "$id failed (exit $rc)" "$work/$id.err"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$((e - s))" "$(tail -n1 "$work/$id.time" | awk '{ print $1 + $2 }')" \
    "$(answers "$work/$id.err")" "$(delta "$c0" "$c1")" \
    "$(sed -n 's/.*stats: fleet: .* flushes \([0-9]*\) .*/\1/p' "$work/$id.err")" >>"$work/flood.tsv"
}

# reference ID ARGS... : redis-benchmark --csv; appends "ID <tab> rps" to ref.tsv.
reference() {
  local id="$1"
  shift
  redis-benchmark --csv -q -n 100000 -c 1 "$@" >"$work/$id.csv" 2>&1 || fail "redis-benchmark $id failed" "$work/$id.csv"
  # The test's name may hold commas (EVAL's script): split on '","'.
  printf '%s\t%s\n' "$id" "$(tail -n1 "$work/$id.csv" | awk -F'","' '{ print $2 }')" >>"$work/ref.tsv"
}

load_before="$(bench_load)"
echo "fleet.sh: timing, $repeat rounds ..." >&2
for ((round = 1; round <= repeat; round++)); do
  reference incr-unix -s "$sock" -t incr
  reference eval-unix -s "$sock" eval "return redis.call('incr', KEYS[1])" 1 bench:eval
  reference incr-unix-p64 -s "$sock" -P 64 -t incr
  reference incr-tcp -h 127.0.0.1 -p "$port" -t incr
  for kind in "${cases[@]}"; do
    for mode in "${modes[@]}"; do
      [[ "$kind-$mode" == alert8k-exact ]] && continue
      run=$((run + 1))
      timed "$kind-$mode" "${sw[@]}" -r "$work/$kind-$mode.toml" --fleet-namespace "l$run" "$log"
    done
  done
  for d in $depths; do
    files=()
    for ((i = 0; i < d; i++)); do files+=("$work/depth-$d-$i.log"); done
    hosts "depth-$d" 1 "$work/depth.toml" "${files[@]}"
  done
  hosts unix-1 1 "$work/all-unix.toml"
  hosts unix-2 2 "$work/all-unix.toml"
  hosts unix-4 4 "$work/all-unix.toml"
  hosts tcp-1 1 "$work/all-tcp.toml"
  hosts tcp-4 4 "$work/all-tcp.toml"
  flood flood
done
load_after="$(bench_load)"

BENCH_CPU="$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n1 || true)"
BENCH_DATE="$(date -u '+%Y-%m-%d %H:%M UTC')"
export BENCH_CPU BENCH_DATE
python3 - "$work" "$log" "$lines" "$decisions" "$repeat" "$load_before" "$load_after" "$bin" "$redis_version" "$depths" "$keys" "$flush_seconds" <<'PY'
import os
import re
import sys

work, log, lines, decisions, repeat, load_before, load_after, binary, redis_version, depths, keys, flush_s = sys.argv[1:]
keys, flush_s = int(keys), float(flush_s)
lines, decisions, repeat = int(lines), int(decisions), int(repeat)
depths = [int(d) for d in depths.split()]
SYNC_S = 0.25  # [fleet] sync, the default: the rules here do not set it


def read(name):
    with open(os.path.join(work, name)) as f:
        return f.read()


def events(err):
    """The rule's matched events: `events` of an alert rule, `lines` of a throttle rule (one event)."""
    m = re.search(r"stats: rule \S+: lines (\d+)(?: events (\d+))?", err)
    return int(m.group(2) or m.group(1)) if m else 0


best, cpu, unanswered, total = {}, {}, {}, {}
for row in read("times.tsv").splitlines():
    cid, ns, c, _, u, rc, calls, usec = row.split("\t")
    s = int(ns) / 1e9
    unanswered[cid] = unanswered.get(cid, 0) + int(u)  # over every run: a flag, not a figure
    t = total.setdefault(cid, dict(s=0.0, redis=0.0, calls=0, usec=0, runs=0))
    t["s"] += s
    t["redis"] += float(rc)
    t["calls"] += int(calls)
    t["usec"] += int(usec)
    t["runs"] += 1
    if s < best.get(cid, float("inf")):
        best[cid], cpu[cid] = s, float(c)

ref = {}
for row in read("ref.tsv").splitlines():
    cid, rps = row.split("\t")
    ref[cid] = max(ref.get(cid, 0.0), float(rps))

hosts = {}
for row in read("hosts.tsv").splitlines():
    cid, ns, c, rc, calls, usec, ans, unans, csw = row.split("\t")
    s = int(ns) / 1e9
    unanswered[cid] = unanswered.get(cid, 0) + int(unans)
    if cid not in hosts or s < hosts[cid]["s"]:
        hosts[cid] = dict(s=s, cpu=float(c), redis=float(rc), calls=int(calls), usec=int(usec), answered=int(ans),
                         csw=int(csw))


fd = dict(s=0.0, cpu=0.0, redis=0.0, calls=0, usec=0, flushes=0, runs=0, unanswered=0)
for row in read("flood.tsv").splitlines():
    cid, ns, c, _, u, rc, calls, usec, flushes = row.split("\t")
    for k, v in (("s", int(ns) / 1e9), ("cpu", float(c)), ("redis", float(rc)), ("calls", int(calls)),
                 ("usec", int(usec)), ("flushes", int(flushes or 0)), ("runs", 1), ("unanswered", int(u))):
        fd[k] += v
unanswered["flood"] = fd["unanswered"]


def flag(cid):
    u = unanswered.get(cid, 0)
    return " **%d requests unanswered over the runs: decided locally**" % u if u else ""


def si(x):
    return "%.2f M" % (x / 1e6) if x >= 1e6 else "%.0f k" % (x / 1e3) if x >= 1e4 else "%.0f" % x


cases = (("none", "throttle, matches nothing (`OutOfMemoryError: Metaspace`)"),
         ("rare", "throttle, rare (`OutOfMemoryError: Java heap space`)"),
         ("dense", "throttle, dense (the 8 alert patterns)"),
         ("alert", "alert, dense (the 8 alert patterns)"),
         ("alert8k", "alert, dense, `8000 per 1m` (early flushes 1000 events apart)"))
modes = ("local", "exact", "batched")
# What Redis spends on a run that sends it nothing (the INFO calls around it,
# serverCron): the mean of the host-local runs, taken off each fleet run.
loc = [total[k + "-local"] for k, _ in cases]
idle = sum(t["redis"] for t in loc) / sum(t["runs"] for t in loc)


def net_redis(cid):
    t = total[cid]
    return max(0.0, t["redis"] - idle * t["runs"])


print("## swthrottle fleet windows")
print()
print("redis-server %s of its own (no persistence), on a unix socket and on 127.0.0.1 TCP; swthrottle `-j 1`,"
      " one rule (`100 per 1m`), output to /dev/null. Wall time, the fastest of %d runs;"
      " CPU = user + sys of swthrottle." % (redis_version, repeat))
print()
print("### Lines: host-local, `fleet = \"exact\"` and `fleet = \"batched\"` (unix socket, `time = \"log\"`)")
print()
print("Log: %d lines, %.1f MB (%s)." % (lines, os.path.getsize(log) / 1e6, os.path.basename(log)))
print()
print("| rule | mode | matched events | s | lines/s | vs local | CPU s | EVALSHA per 10^4 events |"
      " Redis CPU ms per 10^4 events | µs per matched event |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
ev = {}
for kind, label in cases:
    lo = best[kind + "-local"]
    for mode in modes:
        cid = kind + "-" + mode
        if cid not in total:
            continue
        t = total[cid]
        m = events(read(cid + ".err"))
        ev[cid] = m
        s = best[cid]
        per = lambda x: "%.1f" % (x / (m * t["runs"]) * 1e4) if m else "—"
        extra = "%.1f" % ((s - lo) / m * 1e6) if m and mode != "local" else "—"
        print("| %s | %s | %d (%.2f %%) | %.3f | %s | %.2fx | %.2f | %s | %s | %s |%s"
              % (label if mode == "local" else "", mode, m, 100.0 * m / lines, s, si(lines / s), lo / s, cpu[cid],
                 per(t["calls"]), per(net_redis(cid) * 1e3), extra,
                 flag(cid)))
print()
print("vs local: the run's lines/s over the host-local run's (1.00x: free; the target for batched is >= 0.95x)."
      " EVALSHA and Redis CPU: INFO commandstats and INFO cpu (used_cpu_sys + used_cpu_user) after minus before"
      " each run, summed over the %d rounds; a fleet run's Redis CPU is net of what Redis spends on a run that"
      " sends it nothing (%.2f ms: the INFO calls around the run, serverCron; the mean of the host-local runs)."
      " Y = 100 unless said: Y/8 = 12. µs per matched event: the extra wall time over the"
      " host-local run divided by the matched events (the fixed cost of a fleet run, connecting and loading the"
      " scripts, is what the rule that matches nothing shows). CPU: of the fastest run, to 10 ms (/usr/bin/time);"
      " on a busy machine it is steadier than the wall time." % (repeat, idle * 1e3))
bd, ba = best["dense-local"] / best["dense-batched"], best["alert-local"] / best["alert-batched"]
print()
b8 = best["alert8k-local"] / best["alert8k-batched"]
print("Batched against host-local: dense throttle %.2fx, dense alert %.2fx, dense alert with Y = 8000 %.2fx (%s);"
      " exact: %.2fx and %.2fx. CPU of swthrottle, batched over local: %.2fx, %.2fx, %.2fx."
      % (bd, ba, b8, "all within 5 %" if min(bd, ba, b8) >= 0.95 else "**not all within 5 %**",
         best["dense-local"] / best["dense-exact"], best["alert-local"] / best["alert-exact"],
         cpu["dense-batched"] / max(cpu["dense-local"], 0.01), cpu["alert-batched"] / max(cpu["alert-local"], 0.01),
         cpu["alert8k-batched"] / max(cpu["alert8k-local"], 0.01)))


def dtable(ids, label):
    print("| %s | seconds | decisions/s | µs per decision | swthrottle CPU µs/decision |"
          " swthrottle context switches/decision | redis CPU µs per decision | EVALSHA usec_per_call |" % label)
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for cid, name in ids:
        h = hosts[cid]
        a = h["answered"]
        dps = a / h["s"]
        print("| %s | %.3f | %.0f | %.1f | %.1f | %.1f | %.1f | %.2f |%s"
              % (name, h["s"], dps, 1e6 / dps, h["cpu"] / a * 1e6, h["csw"] / a, h["redis"] / a * 1e6,
                 h["usec"] / h["calls"] if h["calls"] else float("nan"), flag(cid)))


print()
print("### Exact decisions: every line matches the fleet rule")
print()
print("%d decisions per run in all. decisions/s = decisions answered by Redis / wall time of the whole run."
      % decisions)
print()
print("**Pipeline depth**: one process, `time = \"arrival\"`, the decisions split over N input files, each read"
      " by a decider thread of its own: up to N requests in flight in the process's one pipeline.")
print()
dtable([("depth-%d" % d, "%d input%s" % (d, "" if d == 1 else "s")) for d in depths], "inputs (depth)")
print()
print("**Hosts**: N processes at once on one namespace, each on its own %d / N lines (`time = \"log\"`, the same"
      " stamps: one window)." % decisions)
print()
dtable([(c, "%s, %s process%s" % (c.split("-")[0], c.split("-")[1], "" if c.endswith("-1") else "es"))
        for c in ("unix-1", "unix-2", "unix-4", "tcp-1", "tcp-4")], "transport, processes")
print()
print("Context switches: voluntary + involuntary (/usr/bin/time %w + %c) of the swthrottle processes. redis CPU:"
      " INFO cpu used_cpu_sys + used_cpu_user, after the run minus before (I/O included). EVALSHA usec_per_call:"
      " INFO commandstats, reset before each run (the script's time inside Redis, no I/O).")

print()
print("**Batched flushes in a steady flood**: one process, `time = \"arrival\"`, a `fleet = \"batched\"` alert"
      " keyed by %d keys (Y = 10^6: no early flush), fed one line per key every 50 ms for %g s"
      " (tests/bench/fleet_pace.py); summed over the %d runs." % (keys, flush_s, fd["runs"]))
print()
print("| keys | lines | flushes | flushes/s | EVALSHA calls | redis CPU µs per flush | EVALSHA usec_per_call |"
      " swthrottle CPU % |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
fcpu = fd["redis"] / fd["calls"] if fd["calls"] else float("nan")
print("| %d | %d per run | %d | %.0f | %d | %.1f | %.2f | %.1f |%s"
      % (keys, keys * round(flush_s / 0.05), fd["flushes"], fd["flushes"] / fd["s"], fd["calls"], fcpu * 1e6,
         fd["usec"] / fd["calls"] if fd["calls"] else float("nan"), 100 * fd["cpu"] / fd["s"], flag("flood")))
print()
print("A flush is one script per window, all of a host's windows in one pipeline every `sync`.")

print()
print("### Reference: redis-benchmark on the same server (`-n 100000`, best of %d)" % repeat)
print()
print("| command | requests/s | µs per request |")
print("| --- | ---: | ---: |")
for cid, label in (("incr-unix", "`-c 1 -t incr`, unix socket (serial)"),
                   ("eval-unix", "`-c 1 eval \"return redis.call('incr', KEYS[1])\" 1 k`, unix socket"),
                   ("incr-unix-p64", "`-c 1 -P 64 -t incr`, unix socket (pipelined)"),
                   ("incr-tcp", "`-c 1 -t incr`, TCP 127.0.0.1 (serial)")):
    print("| %s | %.0f | %.1f |" % (label, ref[cid], 1e6 / ref[cid]))
one = hosts["unix-1"]["answered"] / hosts["unix-1"]["s"]
dps = {d: hosts["depth-%d" % d]["answered"] / hosts["depth-%d" % d]["s"] for d in depths}
dbest = max(dps, key=dps.get)
print()
print("Unix socket: one input makes %.0f decisions/s, %.2fx a serial INCR client (%.2fx a serial EVAL);"
      " %d inputs in one process %.0f/s (%.2fx serial INCR, %.3fx a pipelined INCR client)."
      % (one, one / ref["incr-unix"], one / ref["eval-unix"], dbest, dps[dbest], dps[dbest] / ref["incr-unix"],
         dps[dbest] / ref["incr-unix-p64"]))

# --- capacity model -------------------------------------------------------------
print()
print("### Capacity model: one Redis core")
print()
print("From the Redis CPU measured above: 1 s of Redis CPU / Redis CPU per script. Exact: one script per matched"
      " event of a fleet rule. Batched alerts: one Flush per window (rule and key) per host per `sync` (%g ms,"
      " the default), sooner after Y/8 unsent events; batched throttles: one Lease per Y/8 permits at most, and"
      " one per bucket while refused." % (SYNC_S * 1e3))
print()
print("| mode | measured on | Redis CPU per script | of which the script (usec_per_call) | per Redis core |")
print("| --- | --- | ---: | ---: | ---: |")
d1, dn = hosts["depth-%d" % depths[0]], hosts["depth-%d" % dbest]
c1 = d1["redis"] / d1["answered"]
cn = dn["redis"] / dn["answered"]
script = dn["usec"] / dn["calls"] / 1e6
print("| exact | %d input (one request in flight) | %.1f µs | %.1f µs | %s matched events/s |"
      % (depths[0], c1 * 1e6, d1["usec"] / d1["calls"], si(1 / c1)))
print("| exact | %d inputs (pipelined) | %.1f µs | %.1f µs | %s matched events/s (ceiling: %s, the script alone) |"
      % (dbest, cn * 1e6, script * 1e6, si(1 / cn), si(1 / script)))
fl = total["alert-batched"]
cf = net_redis("alert-batched") / fl["calls"] if fl["calls"] else float("nan")
print("| batched alert | Flush, steady flood (%d keys, pipelined) | %.1f µs | %.1f µs | %s windows x flushes/s"
      " = %s hosts x keys at sync %g ms |"
      % (keys, fcpu * 1e6, fd["usec"] / fd["calls"], si(1 / fcpu), si(SYNC_S / fcpu), SYNC_S * 1e3))
print("| batched alert | Flush, the dense alert replay (%d per run; many buckets each) | %.1f µs | %.1f µs |"
      " %s windows x flushes/s |" % (fl["calls"] // fl["runs"], cf * 1e6, fl["usec"] / fl["calls"], si(1 / cf)))
le = total["dense-batched"]
cl = net_redis("dense-batched") / le["calls"] if le["calls"] else float("nan")
print("| batched throttle | Lease, the dense throttle run (%d per run) | %.1f µs | %.1f µs | %s leases/s |"
      % (le["calls"] // le["runs"], cl * 1e6, le["usec"] / le["calls"], si(1 / cl)))
print()
print("Choose exact while the fleet's matched events of fleet rules stay well under %s/s (the pipelined figure)"
      " and each input's under %s/s (one round trip each, one request in flight per input): every decision is"
      " then the fleet's. Choose batched for floods: its Redis cost follows windows x hosts / sync (%s hosts x"
      " keys per core) and leases, not events; its lines/s against host-local here: %.2fx (throttle), %.2fx"
      " (alert, Y = 100), %.2fx (alert, Y = 8000)." % (si(1 / cn), si(one), si(SYNC_S / fcpu), bd, ba, b8))
print()
print("Machine: %s, nproc %d; %s; load average %s before the run, %s after; binary %s."
      % (os.environ.get("BENCH_CPU") or "unknown CPU", os.cpu_count(), os.environ.get("BENCH_DATE"),
         load_before, load_after, binary))
PY
