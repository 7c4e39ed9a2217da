#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "delivery/http_client.h"
#include "delivery/retry_policy.h"
#include "support/seed.h"

using swthrottle::delivery::classify;
using swthrottle::delivery::HttpResponse;
using swthrottle::delivery::next_delay_ms;
using swthrottle::delivery::parse_retry_after;
using swthrottle::delivery::RetryPolicy;
using swthrottle::delivery::Verdict;

namespace {

// Wed, 21 Oct 2015 07:28:00 GMT, in ms since the epoch.
constexpr int64_t kOct21 = 1'445'412'480'000;

const char* name(Verdict v) {
  switch (v) {
    case Verdict::Delivered: return "Delivered";
    case Verdict::Retry: return "Retry";
    case Verdict::GiveUp: return "GiveUp";
  }
  return "?";
}

Verdict verdict_of(long status) {
  HttpResponse r;
  r.status = status;
  if (status == 0) r.error = "Couldn't connect to server";
  return classify(r);
}

}  // namespace

TEST_CASE("delivery retry: classify by status") {
  struct Case {
    long status;
    Verdict verdict;
  };
  const std::vector<Case> cases = {
      {200, Verdict::Delivered}, {201, Verdict::Delivered}, {202, Verdict::Delivered}, {204, Verdict::Delivered},
      {0, Verdict::Retry},       {500, Verdict::Retry},     {502, Verdict::Retry},     {503, Verdict::Retry},
      {504, Verdict::Retry},     {408, Verdict::Retry},     {429, Verdict::Retry},     {599, Verdict::Retry},
      {400, Verdict::GiveUp},    {401, Verdict::GiveUp},    {403, Verdict::GiveUp},    {404, Verdict::GiveUp},
      {409, Verdict::GiveUp},    {410, Verdict::GiveUp},    {413, Verdict::GiveUp},    {422, Verdict::GiveUp},
      {301, Verdict::GiveUp},    {302, Verdict::GiveUp},    {307, Verdict::GiveUp},    {308, Verdict::GiveUp},
  };
  for (const auto& c : cases) {
    CAPTURE(c.status);
    CHECK(std::string(name(verdict_of(c.status))) == name(c.verdict));
  }
}

TEST_CASE("delivery retry: the backoff's bound doubles with each attempt, up to max_delay") {
  const RetryPolicy policy;  // 1 s first, 5 min cap
  struct Case {
    uint32_t attempt;
    int64_t bound;
  };
  const std::vector<Case> cases = {
      {0, 1'000},  // not a valid attempt count: taken as the first
      {1, 1'000},    {2, 2'000},       {3, 4'000},
      {4, 8'000},    {8, 128'000},     {9, 256'000},
      {10, 300'000},  // 512 s, capped
      {11, 300'000}, {62, 300'000},    {63, 300'000},
      {64, 300'000}, {1'000, 300'000}, {std::numeric_limits<uint32_t>::max(), 300'000},
  };
  for (const auto& c : cases) {
    CAPTURE(c.attempt);
    // random % (bound + 1): `bound` draws the bound itself, `bound + 1` draws 0.
    CHECK(next_delay_ms(policy, c.attempt, std::nullopt, static_cast<uint64_t>(c.bound)) == c.bound);
    CHECK(next_delay_ms(policy, c.attempt, std::nullopt, static_cast<uint64_t>(c.bound) + 1) == 0);
    CHECK(next_delay_ms(policy, c.attempt, std::nullopt, static_cast<uint64_t>(c.bound) - 1) == c.bound - 1);
  }
}

TEST_CASE("delivery retry: without Retry-After a delay is never above max_delay") {
  RetryPolicy policy;
  policy.first_delay_ms = 700;
  policy.max_delay_ms = 90'000;
  std::mt19937_64 rng(swthrottle::test::base_seed(20261126));
  for (uint32_t attempt = 1; attempt <= 200; ++attempt) {
    for (int i = 0; i < 200; ++i) {
      const int64_t d = next_delay_ms(policy, attempt, std::nullopt, rng());
      CAPTURE(attempt);
      REQUIRE(d >= 0);
      REQUIRE(d <= 90'000);
    }
  }
  CHECK(next_delay_ms(policy, 200, std::nullopt, std::numeric_limits<uint64_t>::max()) <= 90'000);
}

TEST_CASE("delivery retry: full jitter is uniform over [0, bound]") {
  const RetryPolicy policy;
  const uint32_t attempt = 3;  // bound 4 s
  const int64_t bound = 4'000;
  std::mt19937_64 rng(swthrottle::test::base_seed(7));
  constexpr int kDraws = 200'000;
  constexpr int kBins = 10;
  std::array<int, kBins> bins{};
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = -1;
  double sum = 0;
  for (int i = 0; i < kDraws; ++i) {
    const int64_t d = next_delay_ms(policy, attempt, std::nullopt, rng());
    lo = std::min(lo, d);
    hi = std::max(hi, d);
    sum += static_cast<double>(d);
    ++bins[static_cast<std::size_t>(std::min<int64_t>(d * kBins / (bound + 1), kBins - 1))];
  }
  // 200 000 draws over 4 001 values: missing either end has odds ~e^-50.
  CHECK(lo == 0);
  CHECK(hi == bound);
  // The mean's standard deviation is ~2.6 ms here, a bin's ~134 draws: these
  // are ten of them or more, not a flake.
  CHECK(sum / kDraws == doctest::Approx(bound / 2.0).epsilon(0.02));
  for (int b = 0; b < kBins; ++b) {
    CAPTURE(b);
    CHECK(bins[static_cast<std::size_t>(b)] > kDraws / kBins * 93 / 100);
    CHECK(bins[static_cast<std::size_t>(b)] < kDraws / kBins * 107 / 100);
  }
}

TEST_CASE("delivery retry: a Retry-After is a floor, capped at give_up_after") {
  RetryPolicy policy;
  policy.give_up_after_ms = 3'600'000;
  // Larger than the draw: the receiver's wish wins, whatever the draw.
  CHECK(next_delay_ms(policy, 1, 30'000, 0) == 30'000);
  CHECK(next_delay_ms(policy, 1, 30'000, 1'000) == 30'000);
  // Above max_delay too: a Retry-After may ask for more than the backoff's cap.
  CHECK(next_delay_ms(policy, 20, 600'000, 300'000) == 600'000);
  // Smaller than the draw: the draw stands.
  CHECK(next_delay_ms(policy, 3, 10, 4'000) == 4'000);
  CHECK(next_delay_ms(policy, 3, 0, 2'500) == 2'500);
  // Beyond a record's life: no more than give_up_after.
  CHECK(next_delay_ms(policy, 1, 10 * 86'400'000LL, 0) == 3'600'000);
  CHECK(next_delay_ms(policy, 1, std::numeric_limits<int64_t>::max(), 0) == 3'600'000);
  // A negative one (not from parse_retry_after, which never gives one) asks for nothing.
  CHECK(next_delay_ms(policy, 1, -5'000, 700) == 700);
}

TEST_CASE("delivery retry: parse_retry_after, delay-seconds") {
  CHECK(parse_retry_after("120", kOct21) == 120'000);
  CHECK(parse_retry_after("0", kOct21) == 0);
  CHECK(parse_retry_after(" 5 ", kOct21) == 5'000);
  CHECK(parse_retry_after("\t7\r\n", kOct21) == 7'000);
  CHECK(parse_retry_after("007", kOct21) == 7'000);
  // Absurd but digits: saturates instead of wrapping to a negative delay.
  const auto huge = parse_retry_after("99999999999999999999999", kOct21);
  REQUIRE(huge.has_value());
  CHECK(*huge > 0);
}

TEST_CASE("delivery retry: parse_retry_after, the three HTTP-date forms") {
  struct Case {
    std::string value;
    int64_t now;
    int64_t ms;
  };
  const std::vector<Case> cases = {
      // IMF-fixdate
      {"Wed, 21 Oct 2015 07:28:00 GMT", kOct21 - 60'000, 60'000},
      {"Wed, 21 Oct 2015 07:28:00 GMT", kOct21 - 1, 1},
      {"Wed, 21 Oct 2015 07:28:00 GMT", kOct21, 0},
      {"Wed, 21 Oct 2015 07:28:00 GMT", kOct21 - 86'400'000 - 3'723'456, 86'400'000 + 3'723'456},
      {"  Wed, 21 Oct 2015 07:28:00 GMT  ", kOct21 - 1'500, 1'500},
      {"Sun, 06 Nov 1994 08:49:37 GMT", 784'111'777'000 - 90'000, 90'000},
      {"Thu, 29 Feb 2024 00:00:00 GMT", 1'709'164'800'000 - 2'000, 2'000},
      // RFC 850 (two-digit year)
      {"Wednesday, 21-Oct-15 07:28:00 GMT", kOct21 - 60'000, 60'000},
      {"Sunday, 06-Nov-94 08:49:37 GMT", 784'111'777'000 - 4'000, 4'000},
      // 2015: "94" is 1994 (in the past), not 2094 (more than 50 years ahead).
      {"Sunday, 06-Nov-94 08:49:37 GMT", kOct21, 0},
      // 2090: "05" is 2105 (15 years ahead), not 2005.
      {"Monday, 01-Jan-05 00:00:00 GMT", 3'786'912'000'000, 4'260'211'200'000 - 3'786'912'000'000},
      // asctime
      {"Wed Oct 21 07:28:00 2015", kOct21 - 60'000, 60'000},
      {"Sun Nov  6 08:49:37 1994", 784'111'777'000 - 1, 1},
      {"Sun Nov 6 08:49:37 1994", 784'111'777'000 - 1, 1},
  };
  for (const auto& c : cases) {
    CAPTURE(c.value);
    CAPTURE(c.now);
    const auto ms = parse_retry_after(c.value, c.now);
    REQUIRE(ms.has_value());
    CHECK(*ms == c.ms);
  }
}

TEST_CASE("delivery retry: parse_retry_after, a date in the past is 0") {
  CHECK(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", kOct21 + 3'600'000) == 0);
  CHECK(parse_retry_after("Wednesday, 21-Oct-15 07:28:00 GMT", kOct21 + 1) == 0);
  CHECK(parse_retry_after("Wed Oct 21 07:28:00 2015", kOct21 + 86'400'000) == 0);
}

TEST_CASE("delivery retry: parse_retry_after, not a delay") {
  const std::vector<std::string> bad = {
      "",
      "   ",
      "soon",
      "-1",
      "1.5",
      "12abc",
      "5 s",
      "+5",
      "Wed, 21 Oct 2015 07:28:00 UTC",    // only GMT
      "Wed, 21 Oct 2015 07:28:00",        // no zone
      "Wed, 21 Oct 15 07:28:00 GMT",      // IMF-fixdate has a 4-digit year
      "Wed, 32 Oct 2015 07:28:00 GMT",    // no such day
      "Mon, 29 Feb 2021 07:28:00 GMT",    // not a leap year
      "Wed, 21 Oct 2015 24:00:00 GMT",    // no such hour
      "Wed, 21 Oct 2015 07:60:00 GMT",    // no such minute
      "Wed, 21 Oct 2015 07:28:61 GMT",    // no such second (60 is a leap second)
      "Wed, 21 Foo 2015 07:28:00 GMT",    // no such month
      "Xyz, 21 Oct 2015 07:28:00 GMT",    // no such day name
      "wed, 21 oct 2015 07:28:00 gmt",    // names are case-sensitive
      "Wed, 21 Oct 2015 07:28:00 GMT x",  // trailing junk
      "Wed,21 Oct 2015 07:28:00 GMT",     // spacing is fixed
      "Wednesday, 21-Oct-2015 07:28:00 GMT",
      "Wed, 21-Oct-15 07:28:00 GMT",  // RFC 850 takes the long day name
      "Wed Oct 21 07:28:00 15",       // asctime has a 4-digit year
      "Wed Oct 21 07:28 2015",
      "2015-10-21T07:28:00Z",  // not an HTTP-date
  };
  for (const auto& v : bad) {
    CAPTURE(v);
    CHECK_FALSE(parse_retry_after(v, kOct21).has_value());
  }
}
