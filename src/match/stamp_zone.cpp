#include "match/stamp_zone.h"

#include <time.h>

#include <climits>

#include "util/civil_date.h"
#include "util/tz_database.h"

namespace swthrottle::match::stamp {
namespace {

// The machine zone's offset at a UTC time, not cached.
int64_t machine_offset_of_utc(int64_t utc_s) {
  const time_t t = static_cast<time_t>(utc_s);
  struct tm tm {};
  if (localtime_r(&t, &tm) == nullptr) return 0;
  return tm.tm_gmtoff;
}

// The machine zone's offset at a local time, not cached.
int64_t machine_offset_of_local(int64_t local_s) {
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
  int64_t offset = local_s - static_cast<int64_t>(t);
  // A local time that occurs twice: glibc's mktime() picks either reading
  // (it depends on what it converted before), so take the first pass, the
  // larger offset, whose reading lies within hours of mktime's.
  for (const int64_t probe : {static_cast<int64_t>(t) - 3 * 3600, static_cast<int64_t>(t) + 3 * 3600}) {
    const int64_t other = machine_offset_of_utc(probe);
    if (other > offset && machine_offset_of_utc(local_s - other) == other) offset = other;
  }
  return offset;
}

// compute(s) through the slot of the quarter hour of s: compute() is asked
// for the start of the quarter hour. Keys beyond int32 (years past ±60000)
// skip the cache.
template <typename Slots, typename Compute>
int64_t cached(Slots& slots, int64_t s, Compute compute) {
  const int64_t key = civil::floor_div(s, 900);
  if (key < INT32_MIN || key > INT32_MAX) return compute(s);
  std::atomic<uint64_t>& slot = slots[static_cast<uint32_t>(key) % slots.size()];
  const uint64_t packed = slot.load(std::memory_order_relaxed);
  const auto cached_offset = static_cast<int32_t>(static_cast<uint32_t>(packed));
  if (static_cast<int32_t>(packed >> 32) == key && cached_offset != INT32_MIN) return cached_offset;
  const int64_t offset = compute(key * 900);
  slot.store((static_cast<uint64_t>(static_cast<uint32_t>(key)) << 32) | static_cast<uint32_t>(offset),
             std::memory_order_relaxed);
  return offset;
}

}  // namespace

Zone::Cache::Cache() {
  for (auto& slot : slots) slot.store(static_cast<uint32_t>(INT32_MIN), std::memory_order_relaxed);
}

Zone::Zone(bool local, int64_t offset_s)
    : local_(local),
      offset_s_(offset_s),
      from_local_(std::make_unique<Cache>()),
      from_utc_(std::make_unique<Cache>()) {}

Zone::Zone(const config::TimezoneSpec& tz) : Zone(tz.local, static_cast<int64_t>(tz.offset_minutes) * 60) {
  if (tz.local || tz.name.empty()) return;
  std::string ignored;
  named_ = tz::find_zone(tz.name, &ignored);
  local_ = named_ != nullptr;
  offset_s_ = 0;
}

Zone::Zone(const Zone& other) : Zone(other.local_, other.offset_s_) { named_ = other.named_; }

Zone& Zone::operator=(const Zone& other) {
  if (this != &other) *this = Zone(other);
  return *this;
}

int64_t Zone::cached_offset_of_local(int64_t local_s) const {
  if (named_ != nullptr)
    return cached(from_local_->slots, local_s, [this](int64_t s) { return tz::offset_at_local(*named_, s); });
  return cached(from_local_->slots, local_s, machine_offset_of_local);
}

int64_t Zone::offset_of_utc(int64_t utc_s) const {
  if (!local_) return offset_s_;
  if (named_ != nullptr)
    return cached(from_utc_->slots, utc_s, [this](int64_t s) { return tz::offset_at_utc(*named_, s); });
  return cached(from_utc_->slots, utc_s, machine_offset_of_utc);
}

// utc_ms is the first pass when the offset drops within (offset before -
// offset after) of it: the drop is the repeated span. No zone has shifted by
// more than 2 h, so looking 3 h ahead finds the offset after.
int64_t Zone::later_reading_ms(int64_t utc_ms) const {
  if (!local_) return INT64_MIN;
  const int64_t utc_s = civil::floor_div(utc_ms, 1000);
  const int64_t before = offset_of_utc(utc_s);
  const int64_t after = offset_of_utc(utc_s + 3 * 3600);
  if (after >= before || offset_of_utc(utc_s + (before - after)) != after) return INT64_MIN;
  return utc_ms + (before - after) * 1000;
}

int Zone::year_at(int64_t utc_ms) const {
  const int64_t utc_s = civil::floor_div(utc_ms, 1000);
  const int64_t local_s = utc_s + offset_of_utc(utc_s);
  return static_cast<int>(civil::civil_from_days(civil::floor_div(local_s, 86400)).year);
}

}  // namespace swthrottle::match::stamp
