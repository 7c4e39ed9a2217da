#!/usr/bin/env bash
# What fleet windows (`fleet = "exact"`, man page FLEET) cost, against a
# redis-server this script starts on a unix socket and a TCP port of its own
# (no persistence), and against what Redis does for one client
# (redis-benchmark, same server, same run). Prints Markdown.
#
#   tests/bench/fleet.sh BINARY      a Release swthrottle
#
# 1. Lines/s on the generated log (gen_log.py, `time = "log"`, -j 1) with one
#    throttle rule host-local and the same rule with `fleet = "exact"`: a rule
#    that matches rarely (~0.1 % of the lines) and one that matches ~10 %.
#    Exact mode is one Redis round trip per matched event, lines that match no
#    fleet rule never touch Redis.
# 2. Exact decisions/s: a log whose every line matches a fleet throttle rule,
#    BENCH_DECISIONS lines in all, read by 1, 2 and 4 processes at once on one
#    namespace (each reads its share: the first DECISIONS/N lines), over the
#    socket and over TCP; redis-server's CPU per 1000 decisions (INFO cpu) and
#    EVALSHA's usec_per_call (INFO commandstats, reset before each run).
# 3. The reference: redis-benchmark -c 1 (serial) INCR and a one-line Lua EVAL,
#    and INCR with -P 64, on the same server.
#
# BENCH_LINES=N      lines of the generated log of part 1 (default 1000000)
# BENCH_REPEAT=N     runs per command, the fastest counts (default 3)
# BENCH_DECISIONS=N  decisions per run in part 2 (default 50000)
# BENCH_SEED=N       seed of the generated log (default 1)
#
# The part 1 log is written to ${TMPDIR:-/tmp} and reused by later runs with the
# same parameters (the naming of throughput.sh). Needs redis-server, redis-cli,
# redis-benchmark (Debian: redis-server, redis-tools), python3 and /usr/bin/time.
# Wall time; every fleet run gets a namespace of its own, so no run finds
# another's windows. A run where any request went unanswered (timeouts, Redis
# degraded: decided locally) is flagged in the table, since its speed is not the
# fleet's. The load average before and after is printed with the figures.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ $# -eq 1 && -x "$1" ]] || { echo "usage: tests/bench/fleet.sh BINARY" >&2; exit 2; }
bin="$1"
lines="${BENCH_LINES:-1000000}"
repeat="${BENCH_REPEAT:-3}"
decisions="${BENCH_DECISIONS:-50000}"
seed="${BENCH_SEED:-1}"
for tool in redis-server redis-cli redis-benchmark python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "fleet.sh: needs $tool" >&2; exit 1; }
done
[[ -x /usr/bin/time ]] || { echo "fleet.sh: needs /usr/bin/time (Debian: apt-get install time)" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/fleet-bench.XXXXXX")"
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

# --- logs ----------------------------------------------------------------------
gen_hash="$(cat "$here/gen_log.py" "$here/gen_rules.py" | sha1sum | cut -c1-8)"
log="${TMPDIR:-/tmp}/swthrottle-bench-${lines}l-10000k-s${seed}-${gen_hash}.log"
if [[ ! -s "$log" ]]; then
  echo "fleet.sh: writing $log ($lines lines) ..." >&2
  python3 "$here/gen_log.py" --out "$log" --lines "$lines" --keys 10000 --seed "$seed"
fi
cat "$log" >/dev/null
# Part 2: every line matches (ERROR), 1 ms apart; the log for N processes holds
# the first DECISIONS/N lines, so that each run makes DECISIONS decisions in all.
python3 - "$work" "$decisions" <<'PY'
import datetime, sys
work, n = sys.argv[1], int(sys.argv[2])
start = datetime.datetime(2026, 11, 21, 10, 0, 0, tzinfo=datetime.timezone.utc)
lines = []
for i in range(n):
    t = start + datetime.timedelta(milliseconds=i)
    lines.append("%s.%03dZ ERROR [main] c.e.storage.SegmentWriter: write failed: disk full n=%d\n"
                 % (t.strftime("%Y-%m-%dT%H:%M:%S"), i % 1000, i))
for procs in (1, 2, 4):
    with open("%s/all-%d.log" % (work, procs), "w") as f:
        f.writelines(lines[: n // procs])
PY

# --- rules ---------------------------------------------------------------------
# rules FILE NAME FLEET_URL EVENT_PATTERN... : one throttle rule, one event per
# pattern; with a URL, `fleet = "exact"` on it and a [fleet] table.
rules() {
  local file="$1" name="$2" url="$3"
  shift 3
  {
    printf '[settings]\ntime     = "log"\ntimezone = "UTC"\nyear     = 2026\n\n'
    [[ -n "$url" ]] && printf '[fleet]\nredis     = "%s"\nnamespace = "bench"\n\n' "$url"
    printf '[[rule]]\nname      = "%s"\nkind      = "throttle"\nthreshold = "100 per 1m"\n' "$name"
    [[ -n "$url" ]] && printf 'fleet     = "exact"\n'
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
rules "$work/none-local.toml" none "" "$none"
rules "$work/none-fleet.toml" none "$unix_url" "$none"
rules "$work/rare-local.toml" rare "" "$rare"
rules "$work/rare-fleet.toml" rare "$unix_url" "$rare"
rules "$work/dense-local.toml" dense "" "${dense[@]}"
rules "$work/dense-fleet.toml" dense "$unix_url" "${dense[@]}"
rules "$work/all-unix.toml" all "$unix_url" 'ERROR'
rules "$work/all-tcp.toml" all "$tcp_url" 'ERROR'

# --- timing --------------------------------------------------------------------
fail() { echo "fleet.sh: $1" >&2; shift; for f in "$@"; do cat "$f" >&2; done; exit 1; }

# answers FILE : "answered <tab> unanswered" from the fleet line of a run's --stats
# (0 0 without one).
answers() {
  sed -n 's/.*stats: fleet: .* answered \([0-9]*\) unanswered \([0-9]*\) .*/\1\t\2/p' "$1" | grep . || printf '0\t0\n'
}

# timed ID CMD... : one run; appends "ID <tab> wall ns <tab> CPU s <tab> answered
# <tab> unanswered" to times.tsv, keeps the run's stderr (--stats) in ID.err.
timed() {
  local id="$1"
  shift
  local s e rc=0
  s="$(date +%s%N)"
  /usr/bin/time -f '%U %S' -o "$work/$id.time" "$@" >/dev/null 2>"$work/$id.err" || rc=$?
  e="$(date +%s%N)"
  [[ $rc -eq 0 ]] || fail "$id failed (exit $rc): $*" "$work/$id.err"
  printf '%s\t%s\t%s\t%s\n' "$id" "$((e - s))" "$(tail -n1 "$work/$id.time" | awk '{ print $1 + $2 }')" \
    "$(answers "$work/$id.err")" >>"$work/times.tsv"
}

sw=("$bin" -j 1 --stats)
run=0

# hosts ID N RULES : N swthrottle processes at once on one fresh namespace, each
# on all-N.log; appends "ID <tab> wall ns <tab> their CPU s <tab> redis CPU s
# <tab> evalsha calls <tab> evalsha usec <tab> answered <tab> unanswered <tab>
# their context switches" to hosts.tsv, their stderr in ID-I.err.
hosts() {
  local id="$1" n="$2" rules_file="$3"
  local s e c0 c1 i cpu=0 csw=0 ans=0 unans=0 a u pids=()
  run=$((run + 1))
  rcli config resetstat >/dev/null
  c0="$(redis_cpu)"
  s="$(date +%s%N)"
  for ((i = 1; i <= n; i++)); do
    /usr/bin/time -f '%U %S %w %c' -o "$work/$id-$i.time" "${sw[@]}" -r "$rules_file" --fleet-host "h$i" \
      --fleet-namespace "d$run" "$work/all-$n.log" >/dev/null 2>"$work/$id-$i.err" &
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

# reference ID ARGS... : redis-benchmark --csv; appends "ID <tab> rps" to ref.tsv.
reference() {
  local id="$1"
  shift
  redis-benchmark --csv -q -n 100000 -c 1 "$@" >"$work/$id.csv" 2>&1 || fail "redis-benchmark $id failed" "$work/$id.csv"
  # The test's name may hold commas (EVAL's script): split on '","'.
  printf '%s\t%s\n' "$id" "$(tail -n1 "$work/$id.csv" | awk -F'","' '{ print $2 }')" >>"$work/ref.tsv"
}

load_before="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
echo "fleet.sh: timing, $repeat rounds ..." >&2
for ((round = 1; round <= repeat; round++)); do
  reference incr-unix -s "$sock" -t incr
  reference eval-unix -s "$sock" eval "return redis.call('incr', KEYS[1])" 1 bench:eval
  reference incr-unix-p64 -s "$sock" -P 64 -t incr
  reference incr-tcp -h 127.0.0.1 -p "$port" -t incr
  for kind in none rare dense; do
    timed "$kind-local" "${sw[@]}" -r "$work/$kind-local.toml" "$log"
    run=$((run + 1))
    timed "$kind-fleet" "${sw[@]}" -r "$work/$kind-fleet.toml" --fleet-namespace "l$run" "$log"
  done
  hosts unix-1 1 "$work/all-unix.toml"
  hosts unix-2 2 "$work/all-unix.toml"
  hosts unix-4 4 "$work/all-unix.toml"
  hosts tcp-1 1 "$work/all-tcp.toml"
  hosts tcp-4 4 "$work/all-tcp.toml"
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"

BENCH_CPU="$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n1 || true)"
BENCH_DATE="$(date -u '+%Y-%m-%d %H:%M UTC')"
export BENCH_CPU BENCH_DATE
python3 - "$work" "$log" "$lines" "$decisions" "$repeat" "$load_before" "$load_after" "$bin" "$redis_version" <<'PY'
import os
import re
import sys

work, log, lines, decisions, repeat, load_before, load_after, binary, redis_version = sys.argv[1:]
lines, decisions, repeat = int(lines), int(decisions), int(repeat)


def read(name):
    with open(os.path.join(work, name)) as f:
        return f.read()


def matched(err):
    m = re.search(r"stats: lines \d+ matched (\d+)", err)
    return int(m.group(1)) if m else 0


best, cpu, unanswered = {}, {}, {}
for row in read("times.tsv").splitlines():
    cid, ns, c, _, u = row.split("\t")
    s = int(ns) / 1e9
    unanswered[cid] = unanswered.get(cid, 0) + int(u)  # over every run: a flag, not a figure
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


def flag(cid):
    u = unanswered.get(cid, 0)
    return " **%d requests unanswered over the runs: decided locally**" % u if u else ""


print("## swthrottle fleet windows (`fleet = \"exact\"`)")
print()
print("redis-server %s of its own (no persistence), on a unix socket and on 127.0.0.1 TCP; swthrottle `-j 1`,"
      " `time = \"log\"`, one throttle rule (`100 per 1m`), output to /dev/null. Wall time, the fastest of %d runs;"
      " CPU = user + sys of swthrottle." % (redis_version, repeat))
print()
print("### Lines: host-local against `fleet = \"exact\"` (unix socket)")
print()
print("Log: %d lines, %.1f MB (%s)." % (lines, os.path.getsize(log) / 1e6, os.path.basename(log)))
print()
print("| rule | matched lines | local s | local lines/s | fleet s | fleet lines/s | fleet/local | local CPU s |"
      " fleet CPU s | µs per matched line |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for kind, label in (("none", "none (`OutOfMemoryError: Metaspace`)"), ("rare", "rare (`OutOfMemoryError: Java heap space`)"),
                    ("dense", "dense (the 8 alert patterns)")):
    lo, fl = best[kind + "-local"], best[kind + "-fleet"]
    err = read(kind + "-fleet.err")
    m = matched(err)
    extra_us = "%.1f" % ((fl - lo) / m * 1e6) if m else "—"
    print("| %s | %d (%.2f %%) | %.3f | %.2f M | %.3f | %.2f M | %.2fx | %.2f | %.2f | %s |%s"
          % (label, m, 100.0 * m / lines, lo, lines / lo / 1e6, fl, lines / fl / 1e6, lo / fl, cpu[kind + "-local"],
             cpu[kind + "-fleet"],
             extra_us, flag(kind + "-fleet")))
print()
print("fleet/local: the fleet run's lines/s over the local run's (1.00x: free). µs per matched line: the extra wall"
      " time of the fleet run divided by the lines that matched the fleet rule (one EVALSHA each; the fixed cost"
      " of a fleet run, connecting and loading the scripts, is what the rule that matches nothing shows). CPU: of"
      " the fastest run, to 10 ms (/usr/bin/time); on a busy machine it is steadier than the wall time.")

print()
print("### Exact decisions: every line matches the fleet rule")
print()
print("%d decisions per run in all; N processes at once on one namespace, each on its own %d / N lines"
      " (the same stamps: one window). decisions/s = decisions answered by Redis / wall time of the whole run."
      % (decisions, decisions))
print()
print("| transport | processes | seconds | decisions/s | µs per decision | vs redis-benchmark -c 1 INCR |"
      " swthrottle CPU µs/decision | swthrottle context switches/decision | redis CPU ms per 1000 |"
      " EVALSHA usec_per_call |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for cid in ("unix-1", "unix-2", "unix-4", "tcp-1", "tcp-4"):
    h = hosts[cid]
    transport, n = cid.split("-")
    n = int(n)
    answered = h["answered"]
    dps = answered / h["s"]
    reference = ref["incr-" + transport]
    print("| %s | %d | %.3f | %.0f | %.1f | %.2fx | %.1f | %.1f | %.1f | %.2f |%s"
          % (transport, n, h["s"], dps, 1e6 / dps, dps / reference, h["cpu"] / answered * 1e6, h["csw"] / answered,
             h["redis"] / answered * 1e6, h["usec"] / h["calls"] if h["calls"] else float("nan"),
             flag(cid)))
print()
print("vs redis-benchmark: against the serial INCR client on the same transport. Context switches: voluntary +"
      " involuntary (/usr/bin/time %w + %c) of the swthrottle processes. redis CPU: INFO cpu used_cpu_sys +"
      " used_cpu_user, after the run minus before. EVALSHA usec_per_call: INFO commandstats, reset before each run"
      " (the script's time inside Redis, no I/O).")

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
best_n = max(h["answered"] / h["s"] for cid, h in hosts.items() if cid.startswith("unix"))
print()
print("Unix socket: one process makes %.0f decisions/s, %.2fx a serial INCR client (%.2fx a serial EVAL) and"
      " %.3fx a pipelined INCR client; the best of 1, 2 and 4 processes %.0f/s (%.2fx serial INCR)."
      % (one, one / ref["incr-unix"], one / ref["eval-unix"], one / ref["incr-unix-p64"], best_n,
         best_n / ref["incr-unix"]))
print()
print("Machine: %s, nproc %d; %s; load average %s before the run, %s after; binary %s."
      % (os.environ.get("BENCH_CPU") or "unknown CPU", os.cpu_count(), os.environ.get("BENCH_DATE"),
         load_before, load_after, binary))
PY
