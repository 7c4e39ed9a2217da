// The zone of timestamps without an offset (DESIGN.md §4, `timezone`): a fixed
// offset; the machine's zone (TZ) for "local", read with mktime() and
// localtime_r(); or a zone of the tz database by name ("Europe/Berlin",
// util/tz_database.h). Local and named zones behave alike: a repeated local
// time takes its first pass, a skipped one the offset before the change.
//
// Local offsets are looked up once per quarter hour and cached: every zone in
// use since the 1970s changes its offset only on a quarter hour (of local
// time and of UTC), so the offset at the start of a quarter hour holds for
// all of it. A change of TZ after the Zone is made is seen only for quarter
// hours not cached yet. The caches are lock-free: the Zone is safe to use
// from any number of threads at once.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "config/rules.h"

namespace date {
class time_zone;
}

namespace swthrottle::match::stamp {

class Zone {
 public:
  // `local`: the machine's zone; else a fixed offset of `offset_s` seconds east of UTC.
  Zone(bool local, int64_t offset_s);
  // The zone a `timezone` setting names. A name the tz database lacks (it
  // was checked at load, so only if the database changed since) reads as UTC.
  explicit Zone(const config::TimezoneSpec& tz);
  // The same zone with caches of its own, empty.
  Zone(const Zone& other);
  Zone& operator=(const Zone& other);
  Zone(Zone&&) noexcept = default;
  Zone& operator=(Zone&&) noexcept = default;
  ~Zone() = default;

  // The offset (local minus UTC, in seconds) of the local time local_s
  // (seconds since the epoch as if local time were UTC). A local time that
  // occurs twice (DST ends) takes its first pass (the larger offset); one
  // that does not exist (DST starts) the offset mktime() gives.
  // (The local zone's lookup is out of line: inlined, it kept its callers
  // on the hot path from being inlined for the fixed zones, costing ~6 %.)
  int64_t offset_of_local(int64_t local_s) const { return local_ ? cached_offset_of_local(local_s) : offset_s_; }

  // Not a fixed offset: the machine's zone or a named one, whose local
  // times may repeat (later_reading_ms()).
  bool has_rules() const { return local_; }

  // The year of the UTC time utc_ms in this zone.
  int year_at(int64_t utc_ms) const;

  // When utc_ms is the first pass of a local time that occurs twice (DST
  // ends), the second pass of the same local time in ms; else INT64_MIN.
  // A fixed zone has none.
  int64_t later_reading_ms(int64_t utc_ms) const;

 private:
  // Direct-mapped, one slot per quarter hour: (key << 32) | uint32(offset in
  // seconds), where the offset half is INT32_MIN while the slot is empty. One
  // 64-bit word per entry makes a lookup a single relaxed atomic load.
  static constexpr int kSlots = 64;
  struct Cache {
    Cache();
    std::array<std::atomic<uint64_t>, kSlots> slots;
  };

  int64_t cached_offset_of_local(int64_t local_s) const;
  int64_t offset_of_utc(int64_t utc_s) const;

  bool local_;                              // offsets are looked up: the machine's zone, or named_
  int64_t offset_s_;                        // the fixed zone, when !local_
  const date::time_zone* named_ = nullptr;  // a zone of the tz database (lives until exit)
  std::unique_ptr<Cache> from_local_;       // local quarter hour -> offset
  std::unique_ptr<Cache> from_utc_;         // UTC quarter hour -> offset
};

}  // namespace swthrottle::match::stamp
