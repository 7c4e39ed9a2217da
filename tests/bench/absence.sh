#!/usr/bin/env bash
# Absence (issue 33 item 5): with 10^5 known keys, a replay with one absence
# rule (a keyed `when = "hb < 1"`, checked at every boundary through its
# timer wheel) costs at most 1.2x the same replay with the same rule made a
# plain alert (`when = "hb > 1000000"`: the same matching, keys and windows,
# no boundary work). A third run without the heartbeat rule at all shows
# what keying itself costs. The log (gen_heartbeats.py): BENCH_HOSTS hosts
# beating every minute for 15 minutes, 1 % stopping halfway, and half as
# many other lines. Prints Markdown: the best wall and CPU time of
# BENCH_RUNS runs of each, peak RSS, the alerts written, the ratio, and
# the memory a watched key costs beyond a plain one (man page: LIMITS).
#
#   tests/bench/absence.sh BINARY      a Release swthrottle
#
# BENCH_HOSTS=N   hosts, the keys (default 100000)
# BENCH_RUNS=N    runs of each rules file, the best is kept (default 3)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_binary_arg "tests/bench/absence.sh SWTHROTTLE" "$@"
hosts="${BENCH_HOSTS:-100000}"
runs="${BENCH_RUNS:-3}"
bench_need_time

bench_work_dir absence-bench
log="$work/heartbeats.log"
python3 "$here/gen_heartbeats.py" --out "$log" --hosts "$hosts"
cat "$log" >/dev/null  # in the page cache before anything is timed
lines="$(wc -l <"$log")"

# rules FILE WHEN : the heartbeat rule with that condition ("" : none).
rules() {
  {
    printf '[settings]\ntime = "log"\ntimezone = "UTC"\nmax_keys = %d\n' "$((hosts * 2))"
    printf '[[rule]]\nname = "jobs"\nkind = "alert"\nthreshold = "1000000 per 1m"\n'
    printf '  [[rule.event]]\n  name = "done"\n  match = %s\n' "'INFO worker: job done'"
    if [[ -n "$2" ]]; then
      printf '[[rule]]\nname = "heartbeat"\nkind = "alert"\nwindow = "5m"\nwhen = "%s"\n' "$2"
      printf 'key = "{host}"\nresolve = true\n'
      printf '  [[rule.event]]\n  name = "hb"\n  match = %s\n' "'heartbeat from (?P<host>\\S+)'"
    fi
  } >"$1"
}
rules "$work/absence.toml" "hb < 1"
rules "$work/plain.toml" "hb > 1000000"
rules "$work/none.toml" ""

# best FILE : "wall cpu kib alerts" of the best of `runs` runs.
best() {
  local i s kib user sys cpu bs="" bc="" bk="" alerts
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -f '%e %M %U %S' -o "$work/time" "$bin" -j 1 -r "$1" --format json "$log" >"$work/out" \
      2>"$work/err" || { echo "$1 failed:" >&2; cat "$work/err" >&2; exit 1; }
    read -r s kib user sys <"$work/time"
    cpu="$(awk -v u="$user" -v y="$sys" 'BEGIN { print u + y }')"
    if [[ -z "$bs" ]] || awk -v a="$s" -v b="$bs" 'BEGIN { exit !(a < b) }'; then bs="$s"; bc="$cpu"; bk="$kib"; fi
  done
  alerts="$(grep -c '"type":"alert"' "$work/out" || true)"
  echo "$bs $bc $bk $alerts"
}

read -r a_s a_c a_k a_n < <(best "$work/absence.toml")
read -r p_s p_c p_k p_n < <(best "$work/plain.toml")
read -r n_s n_c n_k n_n < <(best "$work/none.toml")
printf '%d lines, %d hosts (keys); best of %d runs, -j 1; load %s\n\n' "$lines" "$hosts" "$runs" "$(bench_load)"
printf '| rules | s | CPU s | peak RSS MiB | alerts |\n| --- | ---: | ---: | ---: | ---: |\n'
for row in "absence rule (hb < 1)|$a_s|$a_c|$a_k|$a_n" "plain alert rule (hb > 1000000)|$p_s|$p_c|$p_k|$p_n" \
  "no heartbeat rule|$n_s|$n_c|$n_k|$n_n"; do
  IFS='|' read -r name s c k n <<<"$row"
  awk -v name="$name" -v s="$s" -v c="$c" -v k="$k" -v n="$n" \
    'BEGIN { printf "| %s | %.2f | %.2f | %.0f | %d |\n", name, s, c, k / 1024, n }'
done
awk -v a="$a_s" -v p="$p_s" -v ac="$a_c" -v pc="$p_c" -v ak="$a_k" -v pk="$p_k" -v h="$hosts" 'BEGIN {
  printf "\nabsence / plain: %.2fx wall, %.2fx CPU (goal: at most 1.2x)\n", a / p, ac / pc
  printf "memory per watched key: %.0f bytes more than a plain alert key (peak RSS)\n", (ak - pk) * 1024 / h }'
