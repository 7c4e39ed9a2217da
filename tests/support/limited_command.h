// A command run under resource limits and redirections, for the fault
// tests: /bin/sh sets them in the child, then exec's the command, so the
// pid a test holds is the command's own.
//
//   Process::spawn(limited(Limits::stdout_on("/dev/full"), {binary, "--rule", ...}))
//
// RLIMIT_FSIZE comes with SIGXFSZ ignored (an ignored signal stays ignored
// across exec), so that a write past the limit fails with EFBIG, as a full
// disk fails with ENOSPC, instead of killing the writer. Every CI machine
// allows both, unlike a mount.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace swthrottle::test {

struct Limits {
  long file_blocks = -1;  // RLIMIT_FSIZE in 512-byte blocks (sh's `ulimit -f`); -1: unchanged
  long open_files = -1;   // RLIMIT_NOFILE (`ulimit -n`); -1: unchanged
  std::string stdout_to;  // a path stdout is opened on for writing ("/dev/full", a FIFO); "": unchanged

  static Limits file_size(long blocks) {
    Limits l;
    l.file_blocks = blocks;
    return l;
  }
  static Limits files_open(long n) {
    Limits l;
    l.open_files = n;
    return l;
  }
  static Limits stdout_on(std::string path) {
    Limits l;
    l.stdout_to = std::move(path);
    return l;
  }
};

// argv for Process::spawn or run_process: `command` under `limits`.
inline std::vector<std::string> limited(const Limits& limits, const std::vector<std::string>& command) {
  std::string script = "trap '' XFSZ";
  if (limits.file_blocks >= 0) script += "; ulimit -f " + std::to_string(limits.file_blocks);
  if (limits.open_files >= 0) script += "; ulimit -n " + std::to_string(limits.open_files);
  script += "; exec \"$@\"";
  if (!limits.stdout_to.empty()) script += " > \"$SWTHROTTLE_TEST_STDOUT\"";
  std::vector<std::string> argv{"/bin/sh", "-c", script, "sh"};
  argv.insert(argv.end(), command.begin(), command.end());
  if (!limits.stdout_to.empty()) {
    // Passed through the environment, not spliced into the script: any path is safe.
    argv.insert(argv.begin(), {"/usr/bin/env", "SWTHROTTLE_TEST_STDOUT=" + limits.stdout_to});
  }
  return argv;
}

}  // namespace swthrottle::test
