// The tz database: zones by their IANA names ("Europe/Berlin") and their
// offsets, for `timezone` (DESIGN.md §4).
//
// Read through Howard Hinnant's date library (date/tz.h), GCC 12's <chrono>
// having no time zones. Debian builds it with USE_OS_TZDB: it reads the
// system's compiled zone files (tzdata, /usr/share/zoneinfo) the first time
// a zone is asked for, and never downloads a database, at build or at run
// time. The zones it returns live until exit; lookups are safe from any
// number of threads (the library reads a zone's transitions once, under its
// own once_flag).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace date {
class time_zone;
}

namespace swthrottle::tz {

// The zone named `name` (exactly as the database spells it), or null with
// *error saying why: no such zone (with the closest name, when one is
// close), or the database could not be read.
const date::time_zone* find_zone(std::string_view name, std::string* error);

// The zone's offset (local minus UTC, in seconds) at the UTC time utc_s.
int64_t offset_at_utc(const date::time_zone& zone, int64_t utc_s);

// The offset of the local time local_s (seconds since the epoch as if local
// time were UTC). A local time that occurs twice (the clocks go back) takes
// the offset of its first pass, the one before the change; one that does
// not exist (the clocks go forward) the offset before the change as well, so
// 02:30 on a day the clocks go from 02:00 to 03:00 is read as 03:30 after it,
// as glibc's mktime() reads it for timezone = "local".
int64_t offset_at_local(const date::time_zone& zone, int64_t local_s);

}  // namespace swthrottle::tz
