#include "match/stamp_zone.h"

#include <time.h>

namespace swthrottle::match::stamp {

Zone::Cache::Cache() {
  for (auto& slot : slots) slot.store(static_cast<uint32_t>(INT32_MIN), std::memory_order_relaxed);
}

Zone::Zone(bool local, int64_t offset_s)
    : local_(local),
      offset_s_(offset_s),
      from_local_(std::make_unique<Cache>()),
      from_utc_(std::make_unique<Cache>()) {}

Zone& Zone::operator=(const Zone& other) {
  if (this != &other) *this = Zone(other);
  return *this;
}

int Zone::year_at(int64_t utc_ms) const {
  const int64_t utc_s = civil::floor_div(utc_ms, 1000);
  const int64_t local_s = utc_s + (local_ ? cached(from_utc_->slots, utc_s, &machine_offset_of_utc) : offset_s_);
  return static_cast<int>(civil::civil_from_days(civil::floor_div(local_s, 86400)).year);
}

int64_t Zone::fill(std::atomic<uint64_t>& slot, int64_t key, int64_t (*compute)(int64_t)) {
  const int64_t offset = compute(key * 900);
  slot.store((static_cast<uint64_t>(static_cast<uint32_t>(key)) << 32) | static_cast<uint32_t>(offset),
             std::memory_order_relaxed);
  return offset;
}

int64_t Zone::machine_offset_of_utc(int64_t utc_s) {
  const time_t t = static_cast<time_t>(utc_s);
  struct tm tm {};
  if (localtime_r(&t, &tm) == nullptr) return 0;
  return tm.tm_gmtoff;
}

int64_t Zone::machine_offset_of_local(int64_t local_s) {
  const int64_t days = civil::floor_div(local_s, 86400);
  const civil::Date c = civil::civil_from_days(days);
  const int64_t sod = local_s - days * 86400;
  struct tm tm {};
  tm.tm_year = static_cast<int>(c.year - 1900);
  tm.tm_mon = static_cast<int>(c.month) - 1;
  tm.tm_mday = static_cast<int>(c.day);
  tm.tm_hour = static_cast<int>(sod / 3600);
  tm.tm_min = static_cast<int>(sod / 60 % 60);
  tm.tm_sec = static_cast<int>(sod % 60);
  tm.tm_isdst = -1;  // let the zone rules decide
  const time_t t = mktime(&tm);
  // -1 is also a valid time, but not for a whole quarter hour in any real zone.
  if (t == static_cast<time_t>(-1)) return machine_offset_of_utc(local_s);
  return local_s - static_cast<int64_t>(t);
}

}  // namespace swthrottle::match::stamp
