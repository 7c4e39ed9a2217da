// libFuzzer entry of the logtime harness; the body is logtime_target.h's,
// which tests/unit/fuzz_regression_test.cpp also calls.
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <ctime>

#include "fuzz/logtime_target.h"

// timezone = "local" reads TZ: a zone with daylight saving time, so that
// local times that occur twice or never are reached.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("TZ", "Europe/Berlin", 1);
  tzset();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  swthrottle::fuzz::logtime_one_input(data, size);
  return 0;
}
