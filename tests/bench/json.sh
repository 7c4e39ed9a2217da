#!/usr/bin/env bash
# JSON lines against plain text (issue 12): the benchmark log (gen_log.py) and
# its 8 rules (gen_rules.py) as text with regexes, and the same log as JSON
# lines (gen_json_log.py) with the same rules written as field matches; `jq`
# selecting the same lines is the reference users reach for. Prints a Markdown
# table and the ratio JSON/text against the target (at least 0.50).
#
#   tests/bench/json.sh BINARY      a Release swthrottle
#
# BENCH_LINES=N   lines of the generated log (default 2000000)
# BENCH_REPEAT=N  runs per command, the fastest counts (default 3)
#
# Wall time, fastest run, inputs read once before timing (page cache). The load
# average is printed with the figures: on a busy machine they are noise.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_binary_arg "tests/bench/json.sh BINARY" "$@"
lines="${BENCH_LINES:-2000000}"
repeat="${BENCH_REPEAT:-3}"

bench_work_dir json-bench
python3 "$here/gen_log.py" --out "$work/text.log" --lines "$lines" --keys 10000 --seed 1
python3 "$here/gen_rules.py" --rules 8 --toml "$work/text.toml" --patterns "$work/p8.txt"
python3 "$here/gen_json_log.py" "$work/text.log" >"$work/json.log"

# The 8 rules of gen_rules.py, on the fields gen_json_log.py writes.
{
  cat <<'TOML'
[settings]
time      = "log"
format    = "json"
timestamp = { field = "ts" }
max_keys  = 200000
TOML
  rule() {  # NAME THRESHOLD FIELDS [KEY]
    printf '\n[[rule]]\nname      = "%s"\nkind      = "alert"\nthreshold = "%s"\n' "$1" "$2"
    [[ $# -ge 4 ]] && printf 'key       = "%s"\n' "$4"
    printf '  [[rule.event]]\n  name   = "hit"\n  fields = %s\n' "$3"
  }
  rule app-timeout "20 per 1m" "{ level = \"ERROR\", msg = { match = 'timeout' } }"
  rule ssh-bruteforce "5 per 1m" "{ msg = { match = 'Failed password for .* from (?P<ip>[0-9a-f.:]+)' } }" "{ip}"
  rule jvm-oom "3 per 5m" "{ msg = { match = 'OutOfMemoryError' } }"
  rule http-5xx "50 per 1m" "{ msg = { match = '\" 5[0-9][0-9] ' } }"
  rule disk-full "1 per 10m" "{ msg = { match = 'disk full' } }"
  rule conn-refused "10 per 1m" "{ msg = { match = 'Connection refused' } }"
  rule segfault "1 per 10m" "{ msg = { match = 'segfault' } }"
  rule db-deadlock "5 per 5m" "{ msg = { match = 'deadlock detected' } }"
} >"$work/json.toml"
"$bin" --check -r "$work/json.toml" >/dev/null
jq_filter='select((.level == "ERROR" and (.msg | test("timeout"))) or (.msg | test("Failed password for .* from|OutOfMemoryError|\" 5[0-9][0-9] |disk full|Connection refused|segfault|deadlock detected")))'
cat "$work/text.log" "$work/json.log" >/dev/null

timed() {  # ID CMD...
  local id="$1"; shift
  local s e
  s="$(date +%s%N)"
  "$@" >"$work/out" 2>&1 || true
  e="$(date +%s%N)"
  echo "$((e - s))" >>"$work/$id.t"
  wc -l <"$work/out" >"$work/$id.n"  # records (swthrottle) or lines selected (jq)
}
have_jq=no
command -v jq >/dev/null && have_jq=yes
for ((round = 1; round <= repeat; round++)); do
  timed text-j1 "$bin" --format json -j 1 -r "$work/text.toml" "$work/text.log"
  timed json-j1 "$bin" --format json -j 1 -r "$work/json.toml" "$work/json.log"
  timed json-j2 "$bin" --format json -j 2 -r "$work/json.toml" "$work/json.log"
  [[ $have_jq == yes ]] && timed jq jq -c "$jq_filter" "$work/json.log"
done

best() { sort -n "$work/$1.t" | head -n1; }
t="$(best text-j1)"
printf '%d lines, %d rounds, fastest run each; load %s\n\n' "$lines" "$repeat" "$(bench_load)"
printf '| command | s | lines/s | vs text -j 1 | output lines |\n| --- | ---: | ---: | ---: | ---: |\n'
ids=(text-j1 json-j1 json-j2)
[[ $have_jq == yes ]] && ids+=(jq)
for id in "${ids[@]}"; do
  ns="$(best "$id")"
  awk -v id="$id" -v ns="$ns" -v t="$t" -v n="$lines" -v out="$(cat "$work/$id.n")" \
    'BEGIN { printf "| %s | %.3f | %.2f M | %.2fx | %d |\n", id, ns / 1e9, n / (ns / 1e9) / 1e6, t / ns, out }'
done
[[ $have_jq == yes ]] || echo "(jq not installed: apt-get install jq)"
awk -v t="$t" -v j="$(best json-j1)" \
  'BEGIN { r = t / j; printf "\nJSON -j 1 / text -j 1: %.2f (target >= 0.50): %s\n", r, (r >= 0.5 ? "met" : "MISSED") }'
