// libFuzzer entry of the json_strings harness; the body is json_strings_target.h's, which
// tests/unit/fuzz_regression_test.cpp also calls.
#include <cstddef>
#include <cstdint>

#include "fuzz/json_strings_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  swthrottle::fuzz::json_strings_one_input(data, size);
  return 0;
}
