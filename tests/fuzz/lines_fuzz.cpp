// libFuzzer entry of the lines harness; the body is lines_target.h's, which
// tests/unit/fuzz_regression_test.cpp also calls.
#include <cstddef>
#include <cstdint>

#include "fuzz/lines_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  swthrottle::fuzz::lines_one_input(data, size);
  return 0;
}
