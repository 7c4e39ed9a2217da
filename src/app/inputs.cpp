#include "app/inputs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "input/byte_source.h"

namespace swthrottle::app {

Result<std::vector<InputSpec>> open_inputs(const cli::Options& options) {
  std::vector<InputSpec> inputs;
  std::vector<std::string> names = options.inputs;
  if (names.empty()) names.push_back("-");
  for (const auto& n : names) {
    InputSpec in{n, -1, options.follow && n != "-"};
    if (n == "-") {
      in.fd = 0;
    } else if (in.follow) {
      // A compressed file does not grow (a rotated app.log.1.gz): following
      // it is a mistake, said now. One that appears later is the Follower's.
      if (const int fd = ::open(n.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK); fd >= 0) {
        char first[4];
        const ssize_t got = ::pread(fd, first, sizeof first, 0);
        ::close(fd);
        const auto c = got > 0 ? input::sniff_compression(std::string_view(first, static_cast<std::size_t>(got)))
                               : input::Compression::None;
        if (c != input::Compression::None) {
          Error e;
          e.what = n + ": compressed input (" + input::compression_name(c) +
                   ") cannot be followed; read it without --follow";
          for (const InputSpec& opened : inputs)
            if (opened.fd > 0) ::close(opened.fd);
          return e;
        }
      }
    } else {
      in.fd = ::open(n.c_str(), O_RDONLY | O_CLOEXEC);
      if (in.fd < 0) {
        Error e;
        e.what = n + ": " + std::strerror(errno);
        for (const InputSpec& opened : inputs)
          if (opened.fd > 0) ::close(opened.fd);
        return e;
      }
    }
    inputs.push_back(in);
  }
  return inputs;
}

}  // namespace swthrottle::app
