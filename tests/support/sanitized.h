// Whether this test binary (and so the program it runs, built in the same
// tree) carries a sanitizer. Sanitized runs are several times slower and
// hold more memory: the tests that scale with either take a smaller load or
// a looser memory bound there, and the Release run checks the real one.
#pragma once

namespace swthrottle::test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace swthrottle::test
