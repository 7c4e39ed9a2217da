// fuzz_check: a property a harness holds its target to. A failure prints
// what broke and aborts, which libFuzzer reports as a crash (with the input
// saved) and a regression test (tests/unit/fuzz_regression_test.cpp) as a
// dead test process.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace swthrottle::fuzz {

[[noreturn]] inline void check_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", file, line, what);
  std::abort();
}

}  // namespace swthrottle::fuzz

#define FUZZ_CHECK(cond) ((cond) ? (void)0 : ::swthrottle::fuzz::check_failed(#cond, __FILE__, __LINE__))
