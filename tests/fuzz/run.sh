#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang-14, ASan + UBSan, build dir
# build-fuzz or $SWTHROTTLE_FUZZ_BUILD) and runs each for SECONDS, one after
# the other, on a corpus made of the committed seeds (tests/fuzz/seeds) and
# seeds drawn at run time from examples/ and tests/data/loghub.
#
#   bash tests/fuzz/run.sh SECONDS [HARNESS...]      (default: all of them)
#
# Prints per harness: executions, coverage (cov/ft of libFuzzer's final
# stats) and crashes. Exits non-zero when any harness crashed, leaked, hung
# (-timeout) or ran out of memory (-rss_limit_mb). Corpora, logs and crash
# inputs go into a temporary directory it prints; it is kept.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

seconds=${1:?usage: run.sh SECONDS [HARNESS...]}
shift
all=(rules expr template logtime json_fields json_strings state lines envelope http_head)
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=("${all[@]}")

build=${SWTHROTTLE_FUZZ_BUILD:-build-fuzz}
jobs=$(nproc 2>/dev/null || echo 2)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# -O1 -g1: quick to build, file:line in reports; assertions stay on.
cmake -S . -B "$build" "${launcher[@]}" -DCMAKE_CXX_COMPILER=clang++-14 -DSWTHROTTLE_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DSWTHROTTLE_BENCH=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target "${harnesses[@]/#/fuzz_}"

work=$(mktemp -d "${TMPDIR:-/tmp}/swthrottle-fuzz.XXXXXX")
echo "fuzz: corpora, logs and crash inputs in $work"

# seed DIR NAME PREFIX: a seed file from the bytes on stdin, after PREFIX,
# octal escapes such as '\103' (the harness's selector bytes).
seed() {
  local dir=$1 name=$2 prefix=$3
  { printf '%b' "$prefix"; cat; } >"$dir/$name"
}

# Sample logs: the examples' and loghub's (the harnesses take their first lines).
logs=(examples/*.log examples/*/*.log examples/*/*.txt examples/*/syslog examples/*/*.json tests/data/loghub/*.log)

make_corpus() {
  local h=$1 dir=$2 f i n
  mkdir -p "$dir"
  # Hand-written seeds, for the harnesses that have some.
  if [ -d "tests/fuzz/seeds/$h" ]; then cp "tests/fuzz/seeds/$h/"* "$dir/"; fi
  case $h in
    rules)
      for f in examples/*.toml examples/*/*.toml; do cp "$f" "$dir/example-${f//\//_}"; done
      ;;
    expr)
      i=0
      grep -h -o -E '^\s*(when|resolve_when)\s*=\s*"[^"]*"' examples/*.toml examples/*/*.toml tests/unit/*.cpp 2>/dev/null |
        sed -E 's/^[^"]*"(.*)"$/\1/' | sort -u | while IFS= read -r line; do
        printf '%s' "$line" >"$dir/seen-$i"
        i=$((i + 1))
      done
      ;;
    template)
      i=0
      grep -h -o -E '^\s*(message|key)\s*=\s*"[^"]*"' examples/*.toml examples/*/*.toml 2>/dev/null |
        sed -E 's/^[^"]*"(.*)"$/\1/' | sort -u | while IFS= read -r line; do
        printf '%s' "$line" >"$dir/seen-$i"
        i=$((i + 1))
      done
      ;;
    logtime)
      # Every setting (byte 0: 0-11, the named forms, match and field) on every sample log.
      for f in "${logs[@]}"; do
        for n in 0 1 2 3 4 5 7 8 10; do
          head -n 40 "$f" | seed "$dir" "log-$n-${f//\//_}" "\\$(printf %o "$n")\\000"
        done
      done
      ;;
    json_fields)
      for f in examples/*/*.json examples/k8s-json/*.log; do
        head -n 40 "$f" | seed "$dir" "log-${f//\//_}" '\100'
        head -n 40 "$f" | seed "$dir" "bytes-${f//\//_}" '\001'
      done
      ;;
    state | http_head) ;;
    envelope)
      # The example pod logs as cri and auto (max-line 8 and 260), and records written as dockerd writes them.
      for f in examples/k8s-pods/var/log/pods/*/*/*.log; do
        head -n 30 "$f" | seed "$dir" "cri-${f//\//_}" 'ü'
        head -n 30 "$f" | seed "$dir" "auto-short-${f//\//_}" ''
      done
      printf '%s\n' '{"log":"a \u003cb\u003e\n","stream":"stdout","time":"2026-01-01T00:00:00.1Z"}' \
        '{"log":"half","stream":"stderr","attrs":{"tag":"x"},"time":"2026-01-01T00:00:01Z"}' \
        '{"log":"rest\n","stream":"stderr","time":"2026-01-01T00:00:02Z"}' | seed "$dir" docker 'ý'
      ;;
    lines)
      # As plain text, efficient -j1 and accurate -j2 (wall clock a day after the stamps), and under
      # arrival time; JSON as *.json, traces as java*.
      for f in "${logs[@]}"; do
        head -n 60 "$f" | seed "$dir" "log-${f//\//_}" '\100'
        head -n 60 "$f" | seed "$dir" "acc-j2-${f//\//_}" '\103'
        head -n 60 "$f" | seed "$dir" "arrival-${f//\//_}" '\010'
      done
      for f in examples/*/*.json examples/k8s-json/*.log; do
        head -n 60 "$f" | seed "$dir" "json-${f//\//_}" '\040'
      done
      for f in examples/java-traces/*.log; do
        head -n 60 "$f" | seed "$dir" "java-${f//\//_}" '\020'
      done
      ;;
  esac
}

failed=0
printf '%-12s %12s %8s %8s %8s %s\n' harness executions cov ft crashes result
for h in "${harnesses[@]}"; do
  corpus=$work/corpus/$h
  make_corpus "$h" "$corpus"
  mkdir -p "$work/artifacts"
  dict=()
  [ -f "tests/fuzz/$h.dict" ] && dict=(-dict="$root/tests/fuzz/$h.dict")
  log=$work/$h.log
  rc=0
  # -timeout: an input that takes 10 s is a hang; -rss_limit_mb: libFuzzer's default, said aloud.
  "$build/tests/fuzz/fuzz_$h" "$corpus" "${dict[@]}" -max_total_time="$seconds" -print_final_stats=1 \
    -timeout=10 -rss_limit_mb=2048 -max_len=16384 -artifact_prefix="$work/artifacts/$h-" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  crashes=$(find "$work/artifacts" -name "$h-*" | wc -l)
  result=ok
  if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    result="FAILED (exit $rc; log $log)"
    failed=1
  fi
  printf '%-12s %12s %8s %8s %8s %s\n' "$h" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$crashes" "$result"
done
if [ "$failed" -ne 0 ]; then
  echo "fuzz: a harness failed; the inputs are in $work/artifacts, its log beside them" >&2
  exit 1
fi
