#include "app/inputs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace swthrottle::app {

Result<std::vector<InputSpec>> open_inputs(const cli::Options& options) {
  std::vector<InputSpec> inputs;
  std::vector<std::string> names = options.inputs;
  if (names.empty()) names.push_back("-");
  for (const auto& n : names) {
    InputSpec in{n, -1, options.follow && n != "-"};
    if (n == "-") {
      in.fd = 0;
    } else if (!in.follow) {
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
