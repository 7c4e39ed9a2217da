// util/civil_date.h against a calendar walked one day at a time, and against
// dates computed independently with GNU date (`date -u -d @N +%F`).
#include "util/civil_date.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

namespace civil = swthrottle::civil;

namespace {

// The Gregorian rules, as written in the calendar reform.
bool leap_by_rule(int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

unsigned month_length(int64_t y, unsigned m) {
  static const unsigned kLengths[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && leap_by_rule(y) ? 29 : kLengths[m - 1];
}

std::string text(const civil::Date& d) {
  return std::to_string(d.year) + "-" + std::to_string(d.month) + "-" + std::to_string(d.day);
}

}  // namespace

// Given the days from 1400-01-01 to 2800-12-31 counted one by one from
// 1970-01-01, then both conversions agree with the count: the table years,
// the years std::chrono computes directly and those moved by 400-year cycles.
TEST_CASE("civil date: every day from 1400 to 2800, counted one by one") {
  int64_t y = 1400;
  unsigned m = 1, d = 1;
  int64_t n = -208'188;  // 1400-01-01 (date -u -d 1400-01-01 +%s: -17987443200)
  size_t wrong = 0;
  std::string first;
  for (; y <= 2800; ++n) {
    const civil::Date got = civil::civil_from_days(n);
    if ((civil::days_from_civil(y, m, d) != n || got.year != y || got.month != m || got.day != d ||
         civil::days_in_month(y, m) != month_length(y, m)) &&
        wrong++ == 0) {
      first = std::to_string(n) + " -> " + text(got) + ", want " + text({y, m, d});
    }
    if (++d > month_length(y, m)) {
      d = 1;
      if (++m > 12) {
        m = 1;
        ++y;
      }
    }
  }
  INFO(first);
  CHECK(wrong == 0);
  CHECK(n == 303'517);  // 2801-01-01 (date -u -d 2801-01-01 +%s: 26223868800)
}

TEST_CASE("civil date: leap years") {
  for (int64_t y = -2000; y <= 12000; ++y) {
    CAPTURE(y);
    CHECK(civil::is_leap(y) == leap_by_rule(y));
  }
  CHECK(civil::is_leap(2000));
  CHECK(!civil::is_leap(1900));
  CHECK(civil::is_leap(2028));
  CHECK(!civil::is_leap(2026));
}

// Far from the epoch, to the ends of int64_t milliseconds (GNU date: date -u -d @SECONDS +%F).
TEST_CASE("civil date: far from 1970") {
  CHECK(text(civil::civil_from_days(0)) == "1970-1-1");
  CHECK(text(civil::civil_from_days(-1)) == "1969-12-31");
  CHECK(text(civil::civil_from_days(2'932'896)) == "9999-12-31");
  CHECK(text(civil::civil_from_days(-719'528)) == "0-1-1");
  CHECK(text(civil::civil_from_days(-719'529)) == "-1-12-31");
  CHECK(civil::days_from_civil(0, 1, 1) == -719'528);
  CHECK(civil::days_from_civil(9999, 12, 31) == 2'932'896);
  CHECK(civil::days_from_civil(100000, 3, 1) == 35'804'782);  // date -u -d 100000-03-01 +%s: 3093533164800
  CHECK(text(civil::civil_from_days(35'804'782)) == "100000-3-1");
  // The ends of what append_rfc3339_ms() meets: INT64_MIN and INT64_MAX ms.
  CHECK(text(civil::civil_from_days(-106'751'991'168)) == "-292275055-5-16");
  CHECK(text(civil::civil_from_days(106'751'991'167)) == "292278994-8-17");
  CHECK(civil::days_from_civil(292278994, 8, 17) == 106'751'991'167);
  CHECK(civil::days_from_civil(-292275055, 5, 16) == -106'751'991'168);
  CHECK(civil::floor_div(-1, 1000) == -1);
  CHECK(civil::floor_div(-1000, 1000) == -1);
  CHECK(civil::floor_div(999, 1000) == 0);
}
