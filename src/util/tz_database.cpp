#include "util/tz_database.h"

#include <date/tz.h>

#include <chrono>
#include <exception>
#include <vector>

#include "util/suggest.h"

namespace swthrottle::tz {

const date::time_zone* find_zone(std::string_view name, std::string* error) {
  try {
    const date::tzdb& db = date::get_tzdb();
    for (const date::time_zone& z : db.zones)
      if (z.name() == name) return &z;
    // (Read from the system's files, links such as "US/Eastern" are zones
    // of their own: the library has no separate links then.)
    std::vector<std::string> names;
    names.reserve(db.zones.size());
    for (const date::time_zone& z : db.zones) names.push_back(z.name());
    const std::string close = closest_match(name, names);
    *error = "no time zone \"" + std::string(name) + "\" in the tz database" +
             (close.empty() ? std::string() : " (did you mean \"" + close + "\"?)");
  } catch (const std::exception& e) {
    // No zone files (tzdata not installed), or a file the library cannot read.
    *error = "the tz database could not be read (is tzdata installed?): " + std::string(e.what());
  }
  return nullptr;
}

int64_t offset_at_utc(const date::time_zone& zone, int64_t utc_s) {
  const date::sys_info info = zone.get_info(date::sys_seconds{std::chrono::seconds{utc_s}});
  return info.offset.count();
}

int64_t offset_at_local(const date::time_zone& zone, int64_t local_s) {
  const date::local_info info = zone.get_info(date::local_seconds{std::chrono::seconds{local_s}});
  // unique: `first` is the only reading; ambiguous and nonexistent: `first`
  // is the period before the change.
  return info.first.offset.count();
}

}  // namespace swthrottle::tz
