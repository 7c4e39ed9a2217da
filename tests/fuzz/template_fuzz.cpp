// libFuzzer entry of the template harness; the body is template_target.h's, which
// tests/unit/fuzz_regression_test.cpp also calls.
#include <cstddef>
#include <cstdint>

#include "fuzz/template_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  swthrottle::fuzz::template_one_input(data, size);
  return 0;
}
