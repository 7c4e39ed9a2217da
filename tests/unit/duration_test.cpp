#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "config/duration.h"

using swthrottle::config::format_duration;
using swthrottle::config::parse_duration;
using swthrottle::config::parse_threshold;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

struct Ok {
  std::string text;
  int64_t ms;
};

struct Bad {
  std::string text;
  int col;
  std::string what;
};

}  // namespace

TEST_CASE("duration: valid") {
  const std::vector<Ok> cases = {
      {"500ms", 500},
      {"30s", 30'000},
      {"5m", 300'000},
      {"1h30m", 5'400'000},
      {"2d", 172'800'000},
      {"1m30s500ms", 90'500},
      {"1d2h3m4s5ms", 86'400'000 + 7'200'000 + 180'000 + 4'000 + 5},
      {"1ms", 1},
      {"90s", 90'000},  // not normalised, but accepted
      {"1500ms", 1'500},
      {"05s", 5'000},
      {"1h0m", 3'600'000},
      {"  5m  ", 300'000},
      {"\t1s\n", 1'000},
      {"9223372036854775807ms", kMax},
      // INT64_MAX ms = 106751991167 days + 25975807 ms.
      {"106751991167d7h12m55s807ms", kMax},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto r = parse_duration(c.text);
    REQUIRE(r.ok());
    CHECK(*r == c.ms);
  }
}

TEST_CASE("duration: errors name the problem and its column") {
  const std::string too_large = "too large (at most 106751991167d7h12m55s807ms)";
  const std::vector<Bad> cases = {
      {"", 1, "invalid duration \"\": empty"},
      {"   ", 1, "invalid duration \"\": empty"},
      {"5x", 2, "invalid duration \"5x\": unknown unit \"x\" (units: ms, s, m, h, d)"},
      {"5min", 2, "invalid duration \"5min\": unknown unit \"min\" (units: ms, s, m, h, d)"},
      {"5M", 2, "invalid duration \"5M\": unknown unit \"M\" (units: ms, s, m, h, d)"},
      {"0s", 1, "invalid duration \"0s\": must be greater than zero"},
      {"0m0s", 1, "invalid duration \"0m0s\": must be greater than zero"},
      {"  0s", 3, "invalid duration \"0s\": must be greater than zero"},
      {"5", 2, "invalid duration \"5\": missing unit after \"5\" (units: ms, s, m, h, d)"},
      {"1m30", 5, "invalid duration \"1m30\": missing unit after \"30\" (units: ms, s, m, h, d)"},
      {"1.5m", 2, "invalid duration \"1.5m\": fractions are not allowed (write \"1m30s\")"},
      {"0.5s", 2, "invalid duration \"0.5s\": fractions are not allowed (write \"500ms\")"},
      {".5s", 1, "invalid duration \".5s\": fractions are not allowed (write \"500ms\")"},
      {"2.25h", 2, "invalid duration \"2.25h\": fractions are not allowed (write \"2h15m\")"},
      // 1.0005 s is not a whole number of milliseconds: no suggestion.
      {"1.0005s", 2, "invalid duration \"1.0005s\": fractions are not allowed"},
      // The suggestion would only cover one part of the duration: none.
      {"1m1.5s", 4, "invalid duration \"1m1.5s\": fractions are not allowed"},
      {"1.5", 2, "invalid duration \"1.5\": fractions are not allowed"},
      {"-5m", 1, "invalid duration \"-5m\": a duration has no sign"},
      {"+5m", 1, "invalid duration \"+5m\": a duration has no sign"},
      {"1h 30m", 3, "invalid duration \"1h 30m\": spaces are not allowed inside a duration (write \"1h30m\")"},
      {"5 m", 2, "invalid duration \"5 m\": spaces are not allowed inside a duration (write \"5m\")"},
      {"1h 30x", 3, "invalid duration \"1h 30x\": spaces are not allowed inside a duration"},
      {"30s1m", 4, "invalid duration \"30s1m\": units must go from largest to smallest (write \"1m30s\")"},
      {"1ms1s", 4, "invalid duration \"1ms1s\": units must go from largest to smallest (write \"1s1ms\")"},
      {"1m2m", 4, "invalid duration \"1m2m\": unit \"m\" appears twice (write \"3m\")"},
      // The order error comes first (leftmost); the rest is broken, so no suggestion.
      {"30s1m5x", 4, "invalid duration \"30s1m5x\": units must go from largest to smallest"},
      {"30s1x", 5, "invalid duration \"30s1x\": unknown unit \"x\" (units: ms, s, m, h, d)"},
      {"m", 1, "invalid duration \"m\": expected a number, found \"m\""},
      {"abc", 1, "invalid duration \"abc\": expected a number, found \"abc\""},
      {"5m,", 3, "invalid duration \"5m,\": expected a number, found \",\""},
      {"106751991168d", 1, "invalid duration \"106751991168d\": " + too_large},
      {"9223372036854775808ms", 1, "invalid duration \"9223372036854775808ms\": " + too_large},
      {"99999999999999999999999s", 1, "invalid duration \"99999999999999999999999s\": " + too_large},
      // Overflows only when the last part is added.
      {"106751991167d7h12m55s808ms", 22, "invalid duration \"106751991167d7h12m55s808ms\": " + too_large},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto r = parse_duration(c.text);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().what == c.what);
    CHECK(r.error().col == c.col);
    CHECK(r.error().file.empty());
    CHECK(r.error().line == 0);
  }
}

TEST_CASE("duration: format") {
  const std::vector<Ok> cases = {
      {"1m30s", 90'000},
      {"500ms", 500},
      {"1d", 86'400'000},
      {"1ms", 1},
      {"1h30m", 5'400'000},
      {"1d1h1m1s1ms", 86'400'000 + 3'600'000 + 60'000 + 1'000 + 1},
      {"2d500ms", 172'800'500},
      {"106751991167d7h12m55s807ms", kMax},
      {"0ms", 0},
      {"-1s500ms", -1'500},
      {"-106751991167d7h12m55s808ms", std::numeric_limits<int64_t>::min()},
  };
  for (const auto& c : cases) {
    CAPTURE(c.ms);
    CHECK(format_duration(c.ms) == c.text);
  }
}

TEST_CASE("duration: format output parses back to the same value") {
  for (int64_t ms : {int64_t{1}, int64_t{999}, int64_t{1'000}, int64_t{59'999}, int64_t{3'600'001}, int64_t{86'399'999},
                     int64_t{123'456'789'012}, kMax}) {
    CAPTURE(ms);
    auto r = parse_duration(format_duration(ms));
    REQUIRE(r.ok());
    CHECK(*r == ms);
  }
}

TEST_CASE("threshold: valid forms") {
  struct Case {
    std::string text;
    uint64_t count;
    int64_t window_ms;
    const char* window_text;
  };
  const std::vector<Case> cases = {
      {"5 per 1m", 5, 60'000, "1m"},
      {"5/1m", 5, 60'000, "1m"},
      {"5 / 1m", 5, 60'000, "1m"},
      {"5/ 30s", 5, 30'000, "30s"},
      {"5 /30s", 5, 30'000, "30s"},
      {"100 per 1h30m", 100, 5'400'000, "1h30m"},
      {"  5 per 1m  ", 5, 60'000, "1m"},
      {"5\tper\t1m", 5, 60'000, "1m"},
      {"5 per   1m", 5, 60'000, "1m"},
      {"1 per 500ms", 1, 500, "500ms"},
      {"18446744073709551615 per 1d", UINT64_MAX, 86'400'000, "1d"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto r = parse_threshold(c.text);
    REQUIRE(r.ok());
    CHECK(r->count == c.count);
    CHECK(r->window_ms == c.window_ms);
    CHECK(r->window_text == c.window_text);
  }
}

TEST_CASE("threshold: errors") {
  const std::vector<Bad> cases = {
      {"", 1, "invalid threshold \"\": empty (write \"Y per X\", e.g. \"5 per 1m\")"},
      {"0 per 1m", 1, "invalid threshold \"0 per 1m\": the count must be at least 1"},
      {"0/1m", 1, "invalid threshold \"0/1m\": the count must be at least 1"},
      {"per 1m", 1, "invalid threshold \"per 1m\": expected a count first, as in \"5 per 1m\""},
      {"-5 per 1m", 1, "invalid threshold \"-5 per 1m\": expected a count first, as in \"5 per 1m\""},
      {"1.5 per 1m", 2, "invalid threshold \"1.5 per 1m\": the count must be a whole number"},
      {"18446744073709551616 per 1m", 1, "invalid threshold \"18446744073709551616 per 1m\": the count is too large"},
      {"5 1m", 3, "invalid threshold \"5 1m\": expected \"per\" or \"/\" after the count, as in \"5 per 1m\""},
      {"5per1m", 2, "invalid threshold \"5per1m\": expected \"per\" or \"/\" after the count, as in \"5 per 1m\""},
      {"5 pers 1m", 3,
       "invalid threshold \"5 pers 1m\": expected \"per\" or \"/\" after the count, as in \"5 per 1m\""},
      {"5", 2, "invalid threshold \"5\": expected \"per\" or \"/\" after the count, as in \"5 per 1m\""},
      {"5 per", 6, "invalid threshold \"5 per\": missing the window, as in \"5 per 1m\""},
      {"5/", 3, "invalid threshold \"5/\": missing the window, as in \"5 per 1m\""},
      {"5 per 1x", 8, "invalid threshold \"5 per 1x\": window \"1x\": unknown unit \"x\" (units: ms, s, m, h, d)"},
      {"5 per 0s", 7, "invalid threshold \"5 per 0s\": window \"0s\": must be greater than zero"},
      {" 5 per 1m 30s", 10,
       "invalid threshold \"5 per 1m 30s\": window \"1m 30s\": spaces are not allowed inside a duration "
       "(write \"1m30s\")"},
      {"5 per 1.5m", 8,
       "invalid threshold \"5 per 1.5m\": window \"1.5m\": fractions are not allowed (write \"1m30s\")"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto r = parse_threshold(c.text);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().what == c.what);
    CHECK(r.error().col == c.col);
  }
}
