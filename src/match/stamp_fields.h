// The broken-down fields of one timestamp as a form reader found them, and
// their check and conversion to a local time (DESIGN.md §4): what every form
// shares once its bytes are read.
#pragma once

#include <climits>
#include <cstdint>

#include "util/civil_date.h"

namespace swthrottle::match::stamp {

constexpr int kUnset = INT_MIN;
// "No timestamp" where ms or s since the epoch are returned: a sentinel, not
// an optional, inside the parser (see LogTime::parse()). No stamp comes near
// it: a 4-digit year keeps every result within about ±3.2e14 ms.
constexpr int64_t kNoTime = INT64_MIN;
constexpr int64_t kDayMs = 86'400'000;

struct Fields {
  int year = kUnset;  // kUnset: infer (DESIGN.md §4)
  int month = 0;      // 1..12; 0 = not given (then yday must be)
  int day = 0;
  int yday = 0;  // %j, used only without a month
  int hour = 0;
  int minute = 0;
  int second = 0;
  int ms = 0;
  bool hour12 = false;  // %I: hour is on a 12-hour clock
  bool pm = false;
  bool has_offset = false;
  int64_t offset_s = 0;
  bool has_epoch = false;  // %s: an absolute time; the other fields are ignored but ms
  int64_t epoch_s = 0;
};

// The time of day checked and settled (12-hour clock, leap second). False:
// no such time.
inline bool settle_time(Fields& f) {
  if (f.hour12) f.hour = f.hour % 12 + (f.pm ? 12 : 0);
  if (f.hour > 23 || f.minute > 59 || f.second > 60) return false;
  if (f.second == 60) {
    // A leap second: :59.999 keeps it after :59 and before the next minute.
    f.second = 59;
    f.ms = 999;
  }
  return true;
}

// The date and time of f in `year` as seconds since the epoch as if in UTC,
// or kNoTime when that date does not exist.
inline int64_t local_seconds(const Fields& f, int year) {
  int month = f.month;
  int day = f.day;
  if (month == 0) {
    if (f.yday < 1 || f.yday > (civil::is_leap(year) ? 366 : 365)) return kNoTime;
    const civil::Date c = civil::civil_from_days(civil::days_from_civil(year, 1, 1) + f.yday - 1);
    month = static_cast<int>(c.month);
    day = static_cast<int>(c.day);
  }
  if (month < 1 || month > 12 || day < 1 ||
      day > static_cast<int>(civil::days_in_month(year, static_cast<unsigned>(month)))) {
    return kNoTime;
  }
  return civil::days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
         f.hour * 3600 + f.minute * 60 + f.second;
}

}  // namespace swthrottle::match::stamp
