// libFuzzer entry of the rules harness; the body is rules_target.h's, which
// tests/unit/fuzz_regression_test.cpp also calls.
#include <cstddef>
#include <cstdint>

#include "fuzz/rules_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  swthrottle::fuzz::rules_one_input(data, size);
  return 0;
}
