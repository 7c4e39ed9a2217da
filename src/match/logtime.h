// time = "log" (SPEC §4): the timestamp written in a log line -> ms since the
// Unix epoch, UTC.
//
// Forms: RFC 3339 / ISO 8601, syslog ("Nov 21 10:00:00"), epoch seconds or
// milliseconds (only at the very start of the line), common log format
// ("[21/Nov/2026:10:00:00 +0000]"), and strptime formats (our own subset,
// applied at the start of the line). `timestamp = "auto"` takes the leftmost
// stamp of any form; a named form is searched the same way for that form only.
// With `match`, the first capture group of that RE2 pattern is parsed instead.
//
// Contract:
//  - A stamp whose fields are out of range (month 13, Feb 30, hour 24, ...) is
//    "no timestamp here"; a search keeps looking further right.
//  - Second 60 (a leap second) reads as :59.999 so that the order of stamps
//    around it is kept.
//  - A stamp without an offset is in the configured zone: a fixed offset, or
//    the machine zone (TZ) for "local". Local offsets are looked up once per
//    quarter hour of local time and cached (lock-free), so a change of TZ
//    after make() is seen only for quarter hours not cached yet. A local time
//    that occurs twice (DST ends) takes the offset mktime() picks; one that
//    does not exist (DST starts) is converted with the offset mktime() gives.
//  - Stamps without a year (syslog, strptime without %Y/%y) take `year` when
//    it is nonzero, else the year of "now" in the configured zone, or the year
//    before when that would put the stamp more than a day (86 400 000 ms)
//    after now. A Feb 29 that does not exist in that year takes the year
//    before; if it does not exist there either, there is no timestamp.
//
// parse() is const and safe to call from any number of threads at once. For
// the built-in forms and strptime formats it does not allocate. With `match`
// RE2 may allocate inside a search, and a shared RE2 serializes its threads on
// a cache lock (RE2 #569): copy the LogTime per worker (a copy compiles its
// own RE2 and has its own zone cache).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/rules.h"
#include "util/result.h"

namespace re2 {
class RE2;
}

namespace swthrottle::match {

namespace detail {
struct Fields;  // the broken-down fields of one stamp, before validation

// One step of a compiled strptime format.
struct FormatOp {
  char code;     // conversion letter; ' ' = a run of whitespace; 'L' = a literal
  char literal;  // for 'L'
};
}  // namespace detail

class LogTime {
 public:
  // Builds a parser for the timestamp form of the rules' [settings]. `year` = settings.year (0: infer).
  // Errors (bad strptime format, bad match regex, match regex without a capture group) carry only `what`.
  static Result<LogTime> make(const config::TimestampSpec& spec, const config::TimezoneSpec& tz, int year);

  // The timestamp in `line` in ms since the Unix epoch (UTC), or nullopt when the line has none.
  // `wall_now_ms` is the current wall-clock time, used only to infer the year of stamps without one
  // when year == 0.
  std::optional<int64_t> parse(std::string_view line, int64_t wall_now_ms) const;

  LogTime(const LogTime& other);
  LogTime& operator=(const LogTime& other);
  LogTime(LogTime&&) noexcept;
  LogTime& operator=(LogTime&&) noexcept;
  ~LogTime();

 private:
  enum class Kind { Auto, Rfc3339, Syslog, Epoch, Clf, Strptime };
  using Fields = detail::Fields;

  LogTime() = default;

  std::optional<int64_t> parse_text(std::string_view text, int64_t wall_now_ms) const;
  std::optional<int64_t> search(std::string_view text, int64_t wall_now_ms) const;
  bool run_format(std::string_view text, Fields& f) const;
  std::optional<int64_t> finish(Fields& f, int64_t wall_now_ms) const;
  std::optional<int64_t> to_utc_ms(const Fields& f, int year) const;
  int zone_year(int64_t wall_now_ms) const;
  int64_t offset_of_local(int64_t local_s) const;
  int64_t offset_of_utc(int64_t utc_s) const;
  bool compile_match(std::string* error);

  // Direct-mapped, one slot per quarter hour: (key << 32) | uint32(offset in
  // seconds), where the offset half is INT32_MIN while the slot is empty. One
  // 64-bit word per entry makes a lookup a single relaxed atomic load.
  static constexpr int kZoneSlots = 64;
  struct ZoneCache {
    ZoneCache();
    std::array<std::atomic<uint64_t>, kZoneSlots> slots;
  };

  Kind kind_ = Kind::Auto;
  std::vector<detail::FormatOp> ops_;      // Kind::Strptime: the compiled format
  std::string match_;                      // RE2 pattern; empty = none
  std::unique_ptr<re2::RE2> re_;           // match_, compiled
  bool local_ = true;
  int64_t offset_s_ = 0;                   // the fixed zone, when !local_
  int year_ = 0;
  std::unique_ptr<ZoneCache> from_local_;  // local quarter hour -> offset
  std::unique_ptr<ZoneCache> from_utc_;    // UTC quarter hour -> offset
};

}  // namespace swthrottle::match
