#include "app/inputs.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "input/byte_source.h"
#include "input/glob_watcher.h"

namespace swthrottle::app {

namespace {

// EMFILE: every input is held open from the start (they are decided
// together), so the fix is the limit, or fewer files per run.
std::string too_many_open_files_hint(std::size_t inputs) {
  rlimit rl{};
  std::string limit = "?";
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) limit = std::to_string(rl.rlim_cur);
  return " (" + std::to_string(inputs) + " inputs are held open at once; the open file limit is " + limit +
         ": raise it with ulimit -n, or read fewer files per run)";
}

}  // namespace

Result<std::vector<InputSpec>> open_inputs(const cli::Options& options) {
  std::vector<InputSpec> inputs;
  // Nothing is processed after an error: the files opened so far are closed.
  auto fail = [&inputs](std::string what) -> Result<std::vector<InputSpec>> {
    for (const InputSpec& opened : inputs)
      if (opened.fd > 0) ::close(opened.fd);
    return Error{"", 0, 0, std::move(what)};
  };
  std::vector<std::string> names = options.inputs;
  if (names.empty()) names.push_back("-");
  for (const auto& n : names) {
    InputSpec in{n, -1, options.follow && n != "-"};
    in.glob = in.follow && input::has_glob_chars(n);
    if (n == "-") {
      in.fd = 0;
    } else if (in.glob) {
      // Expanded, and its files opened, as they come (App::read_glob).
    } else if (in.follow) {
      // A compressed file does not grow (a rotated app.log.1.gz): following
      // it is a mistake, said now. One that appears later is the Follower's.
      if (const int fd = ::open(n.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK); fd >= 0) {
        const input::Compression c = input::sniff_file(fd);
        ::close(fd);
        if (c != input::Compression::None)
          return fail(n + ": compressed input (" + input::compression_name(c) +
                      ") cannot be followed; read it without --follow");
      }
    } else {
      in.fd = ::open(n.c_str(), O_RDONLY | O_CLOEXEC);
      if (in.fd < 0) {
        const int err = errno;
        std::string what = n + ": " + std::strerror(err);
        if (err == EMFILE) what += too_many_open_files_hint(names.size());
        return fail(std::move(what));
      }
    }
    struct stat st {};
    in.replay = !in.follow && in.fd >= 0 && ::fstat(in.fd, &st) == 0 && S_ISREG(st.st_mode);
    inputs.push_back(in);
  }
  return inputs;
}

}  // namespace swthrottle::app
