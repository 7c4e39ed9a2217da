# shellcheck shell=bash
# shellcheck disable=SC2034  # here, root, bin, work and log are for the sourcing script
# The preamble the benchmark scripts of tests/bench share; sourced, never run:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# Sets `here` (tests/bench) and `root` (the repository), and gives the
# functions below: the binary to time, the tools a script needs, a work
# directory removed at exit, the load average to print with the figures, and
# the generated benchmark log that runs with the same parameters share.
# Messages name the script that sourced this file.

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bench_script="$(basename "${BASH_SOURCE[1]:-$0}")"

# bench_binary_arg USAGE ARGS... : the one argument, an executable, as `bin`;
# anything else prints "usage: USAGE" and exits 2.
bench_binary_arg() {
  local usage="$1"
  shift
  [[ $# -eq 1 && -x "$1" ]] || { echo "usage: $usage" >&2; exit 2; }
  bin="$1"
}

# bench_build TARGET [CMAKE_ARGS...] : configures build-bench/ (Release) with
# CMAKE_ARGS, builds TARGET there and prints the path of what it built. CMake's
# own output goes to stderr.
bench_build() {
  local target="$1"
  shift
  cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release "$@" >&2
  cmake --build "$root/build-bench" --target "$target" >&2
  echo "$root/build-bench/$target"
}

# bench_need_executable PATH [WHY] : exits 1 when PATH is not an executable.
bench_need_executable() {
  [[ -x "$1" ]] && return 0
  echo "$bench_script: no executable at $1${2:+ ($2)}" >&2
  exit 1
}

# bench_need_time : GNU time (/usr/bin/time), for the peak RSS and CPU time.
bench_need_time() {
  [[ -x /usr/bin/time ]] && return 0
  echo "$bench_script: needs GNU time (/usr/bin/time; Debian: apt-get install time)" >&2
  exit 1
}

# bench_need_tools TOOL... : exits 1 naming the first one not on PATH.
bench_need_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || { echo "$bench_script: needs $tool" >&2; exit 1; }
  done
}

# bench_work_dir NAME : a fresh directory ${TMPDIR:-/tmp}/NAME.XXXXXX as
# `work`, removed with everything in it when the script exits. A script with
# more to clean up sets a trap of its own that removes "$work" too.
bench_work_dir() {
  work="$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
}

# bench_load : the load average (1, 5 and 15 minutes), or "unknown": on a
# busy machine the figures are noise, so it is printed with them.
bench_load() {
  cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown
}

# bench_cached_log LINES SEED : gen_log.py's log of LINES lines (10000 keys)
# as `log`, in ${TMPDIR:-/tmp} under a name of its parameters and of the
# generators' text, written when it is not there yet: later runs with the
# same parameters (and throughput.sh) reuse it.
bench_cached_log() {
  local lines="$1" seed="$2" gen_hash
  gen_hash="$(cat "$here/gen_log.py" "$here/gen_rules.py" | sha1sum | cut -c1-8)"
  log="${TMPDIR:-/tmp}/swthrottle-bench-${lines}l-10000k-s${seed}-${gen_hash}.log"
  if [[ ! -s "$log" ]]; then
    echo "$bench_script: writing $log ($lines lines) ..." >&2
    python3 "$here/gen_log.py" --out "$log" --lines "$lines" --keys 10000 --seed "$seed"
  fi
}
