// libFuzzer entry of the state harness; the body is state_target.h's, which
// tests/unit/fuzz_regression_test.cpp also calls.
#include <cstddef>
#include <cstdint>

#include "fuzz/state_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  swthrottle::fuzz::state_one_input(data, size);
  return 0;
}
