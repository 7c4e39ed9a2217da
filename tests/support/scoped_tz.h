// ScopedTz: sets TZ (and tzset()) for the life of the object and restores
// the previous value, for tests of timezone = "local".
#pragma once

#include <time.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace swthrottle::test {

class ScopedTz {
 public:
  explicit ScopedTz(const char* tz) {
    if (const char* old = std::getenv("TZ")) old_ = old;
    setenv("TZ", tz, 1);
    tzset();
  }
  ~ScopedTz() {
    if (old_) {
      setenv("TZ", old_->c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }
  ScopedTz(const ScopedTz&) = delete;
  ScopedTz& operator=(const ScopedTz&) = delete;

 private:
  std::optional<std::string> old_;
};

}  // namespace swthrottle::test
