// libFuzzer entry of the expr harness; the body is expr_target.h's, which
// tests/unit/fuzz_regression_test.cpp also calls.
#include <cstddef>
#include <cstdint>

#include "fuzz/expr_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  swthrottle::fuzz::expr_one_input(data, size);
  return 0;
}
