// Civil (proleptic Gregorian) dates <-> days since 1970-01-01: the one home of
// calendar arithmetic in swthrottle (log timestamps, RFC 3339 output).
//
// The calendar itself is std::chrono's (year_month_day, sys_days, year::is_leap).
// std::chrono::year holds only -32767..32767, but our callers need every
// int64_t day count (append_rfc3339_ms() is exact for any int64_t ms), so
// dates are moved by whole 400-year cycles into 1970..2369 first: the
// Gregorian calendar repeats every 400 years, which are exactly 146 097 days.
// (No time zones here: g++ 12 has no chrono tzdb; zones use localtime_r.)
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace swthrottle::civil {

// a / b rounded toward negative infinity (b > 0).
constexpr int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

struct Date {
  int64_t year;
  unsigned month;  // 1..12
  unsigned day;    // 1..31
};

namespace detail {

constexpr int64_t kCycleYears = 400;
constexpr int64_t kCycleDays = 146'097;
constexpr int64_t kFirstYear = 1970;  // the start of the cycle std::chrono computes in

// The date of m/d in year y (1970 <= y < 2370) as days since 1970-01-01.
constexpr int64_t chrono_days(int64_t y, unsigned m, unsigned d) {
  using namespace std::chrono;
  return sys_days{year{static_cast<int>(y)} / month{m} / day{d}}.time_since_epoch().count();
}

// days_from_civil() by table for the years logs are written in: even
// std::chrono's division-free formula costs more than two loads here.
constexpr int kTableFirstYear = 1970;
constexpr int kTableYears = 130;  // to 2099

constexpr std::array<int32_t, kTableYears> kYearStart = [] {
  std::array<int32_t, kTableYears> t{};
  for (int k = 0; k < kTableYears; ++k) t[k] = static_cast<int32_t>(chrono_days(kTableFirstYear + k, 1, 1));
  return t;
}();

// [leap][month - 1]: days of the year before the first of the month.
constexpr std::array<std::array<int16_t, 12>, 2> kDaysBeforeMonth = [] {
  std::array<std::array<int16_t, 12>, 2> t{};
  for (unsigned m = 1; m <= 12; ++m) {
    t[0][m - 1] = static_cast<int16_t>(chrono_days(2026, m, 1) - chrono_days(2026, 1, 1));
    t[1][m - 1] = static_cast<int16_t>(chrono_days(2028, m, 1) - chrono_days(2028, 1, 1));
  }
  return t;
}();

}  // namespace detail

// Whether y has a February 29.
constexpr bool is_leap(int64_t y) { return std::chrono::year{static_cast<int>(y % detail::kCycleYears)}.is_leap(); }

// The number of days of month m (1..12) in year y.
constexpr unsigned days_in_month(int64_t y, unsigned m) {
  using namespace std::chrono;
  if (m == 2) return is_leap(y) ? 29 : 28;
  return static_cast<unsigned>((year{2026} / month{m} / last).day());
}

// Days since 1970-01-01 of y-m-d, m in 1..12, d in 1..31 (a day past the end
// of its month counts on into the next).
constexpr int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  if (static_cast<uint64_t>(y - detail::kTableFirstYear) < detail::kTableYears) {
    // Within the table, every fourth year is a leap year.
    return detail::kYearStart[static_cast<std::size_t>(y - detail::kTableFirstYear)] +
           detail::kDaysBeforeMonth[(y & 3) == 0][m - 1] + d - 1;
  }
  const int64_t cycles = floor_div(y - detail::kFirstYear, detail::kCycleYears);
  return detail::chrono_days(y - cycles * detail::kCycleYears, m, d) + cycles * detail::kCycleDays;
}

// The date `days` days after 1970-01-01 (before it, for days < 0).
constexpr Date civil_from_days(int64_t days) {
  const int64_t cycles = floor_div(days, detail::kCycleDays);
  const std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{days - cycles * detail::kCycleDays}}};
  return {static_cast<int>(ymd.year()) + cycles * detail::kCycleYears, static_cast<unsigned>(ymd.month()),
          static_cast<unsigned>(ymd.day())};
}

}  // namespace swthrottle::civil
