// time = "log" (DESIGN.md §4): the timestamp written in a log line -> ms since the
// Unix epoch, UTC.
//
// Forms: RFC 3339 / ISO 8601, syslog ("Nov 21 10:00:00"), epoch seconds or
// milliseconds (only at the very start of the line), common log format
// ("[21/Nov/2026:10:00:00 +0000]"), "2026/11/21 10:00:00" (nginx, Go), basic
// ISO 8601 ("20261121T100000Z", only at the very start of the line, like
// epoch numbers), epoch numbers in the JSON fields "ts", "time", "timestamp",
// "@timestamp" and "__REALTIME_TIMESTAMP" (only in a line that is a JSON
// object: its first byte is '{'), and strptime formats (our own subset,
// applied at the start of the line). `timestamp = "auto"` takes the leftmost
// stamp of any form; a named form is searched the same way for that form only.
// Under "auto" a line that is a JSON object is first read for its stamp
// fields (kStampFields), so a stamp quoted in its message does not win.
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
//    that occurs twice (DST ends) is read as its first pass (the input's
//    order may take the second: pipeline/decider.cpp); one that does not
//    exist (DST starts) is converted with the offset mktime() gives.
//  - Stamps without a year (syslog, strptime without %Y/%y) take `year` when
//    it is nonzero, else the year of "now" in the configured zone, or the year
//    before when that would put the stamp more than a day (86 400 000 ms)
//    after now. A Feb 29 that does not exist in that year takes the year
//    before; if it does not exist there either, there is no timestamp.
//
// Lines in a row mostly repeat the date and time of their stamps: for RFC 3339,
// CLF and syslog stamps a LogTime remembers the last one it found of each
// form (its bytes up to the seconds, and the local time they make; for
// syslog, for one value of now), and for a line that repeats it reads only
// what follows (fraction, offset, the end of the stamp). Results are the same
// as without (tests/unit/logtime_test.cpp holds it to a model of this contract).
//
// The parts: the fixed forms (stamp_forms.h, from the byte readers of
// stamp_bytes.h), the strptime subset (strptime_format.h), the fields they
// read and their conversion (stamp_fields.h, civil dates in
// util/civil_date.h), the zone (stamp_zone.h) and the memo (stamp_memo.h).
//
// parse() is const and safe to call from any number of threads at once: the
// zone caches are lock-free, the memos are seqlocks, and the JSON fields of
// "auto" are read by a parser of each thread's own (thread_local). For the built-in
// forms and strptime formats it does not allocate. With `match` RE2 may
// allocate inside a search, and a shared RE2 serializes its threads on a cache
// lock (RE2 #569); threads that share a LogTime also keep replacing each
// other's memos: copy the LogTime per worker (a copy compiles its own RE2 and
// starts with zone caches and memos of its own, empty).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "config/rules.h"
#include "match/json_fields.h"
#include "match/stamp_fields.h"
#include "match/stamp_zone.h"
#include "match/strptime_format.h"
#include "util/result.h"

namespace re2 {
class RE2;
}

namespace swthrottle::match {

class LogTime {
 public:
  // Under timestamp = "auto", a line that is a JSON object takes its time
  // from the first of these fields that it has and whose value reads as a
  // time: a string in any form the search knows ("2026-01-01T00:00:00Z"), or
  // an epoch number (a JSON number or a string of digits, with an optional
  // fraction) in s, ms, µs or ns told apart by its magnitude (epoch_by_magnitude).
  // Only a line none of them dates is searched as text.
  static constexpr std::string_view kStampFields[] = {
      "ts", "time", "timestamp", "@timestamp", "datetime", "date", "T", "t", "eventTime", "__REALTIME_TIMESTAMP"};

  // Builds a parser for the timestamp form of the rules' [settings]. `year` = settings.year (0: infer).
  // Errors (bad strptime format, bad match regex, match regex without a capture group) carry only `what`.
  static Result<LogTime> make(const config::TimestampSpec& spec, const config::TimezoneSpec& tz, int year);

  // The timestamp in `line` in ms since the Unix epoch (UTC), or nullopt when the line has none.
  // `wall_now_ms` is the current wall-clock time, used only to infer the year of stamps without one
  // when year == 0.
  //
  // Inline so that the optional stays in registers: out of line, GCC 12 returns
  // an optional<int64_t> through the stack with a store-forwarding stall (a
  // byte store, then a wider load) that cost about as much as finding a stamp.
  std::optional<int64_t> parse(std::string_view line, int64_t wall_now_ms) const {
    const int64_t t = parse_ms(line, wall_now_ms);
    if (t == kNoTime) return std::nullopt;
    return t;
  }

  // The JSON field the line's time comes from (one of kStampFields, or
  // a { field = ... }), or "" when it comes from the text or there is none:
  // what --check says. Not for the hot path (it parses the line again).
  std::string_view stamp_field(std::string_view line, int64_t wall_now_ms) const;

  LogTime(const LogTime& other);
  LogTime& operator=(const LogTime& other);
  LogTime(LogTime&&) noexcept;
  LogTime& operator=(LogTime&&) noexcept;
  ~LogTime();

 private:
  enum class Kind { Auto, Rfc3339, Syslog, Epoch, Clf, Strptime, YmdSlash, IsoBasic, JsonEpoch };
  using Fields = stamp::Fields;
  static constexpr int64_t kNoTime = stamp::kNoTime;

  LogTime(const config::TimezoneSpec& tz, int year);

  // These return ms since the epoch, or kNoTime.
  int64_t parse_ms(std::string_view line, int64_t wall_now_ms) const;
  // kJson: the line is a JSON object, where epoch numbers in fields count.
  template <bool kJson>
  int64_t search(std::string_view text, int64_t wall_now_ms) const;
  // The stamp of one form starting at s[i], if it is one.
  template <bool kSlash>
  int64_t rfc3339_time(std::string_view s, std::size_t i) const;
  int64_t iso_basic_time(std::string_view s, std::size_t i) const;
  int64_t rfc3339_after_head(std::string_view s, std::size_t i, int64_t head) const;
  int64_t clf_time(std::string_view s, std::size_t i) const;
  int64_t syslog_time(std::string_view s, std::size_t i, int64_t wall_now_ms) const;
  int64_t syslog_year(const int64_t (&local_s)[3], const Fields& f, int64_t wall_now_ms) const;
  template <typename Memo>
  int64_t remember(Fields& f, Memo* memo, const char* head) const;
  int64_t from_head(int64_t head, Fields& f) const;
  int64_t finish(Fields& f, int64_t wall_now_ms) const;
  int64_t to_utc_ms(const Fields& f, int year) const;
  int64_t utc_ms(int64_t local_s, const Fields& f) const;
  bool compile_match(std::string* error);
  // { field = "..." }: the stamp in that field of a JSON line.
  int64_t field_ms(std::string_view line, int64_t wall_now_ms) const;
  // The time a JSON field's text gives (an epoch number, or a stamp in it).
  int64_t field_text_ms(std::string_view text, int64_t wall_now_ms) const;
  // timestamp = "auto" on a JSON object: the first of kStampFields that reads
  // (its index in *which, -1: none), else the search.
  int64_t json_auto_ms(std::string_view line, int64_t wall_now_ms, int* which = nullptr) const;

  struct Memos;  // the last head of each form (stamp_memo.h)

  Kind kind_ = Kind::Auto;
  stamp::StrptimeFormat format_;  // Kind::Strptime: the compiled format
  std::string match_;             // RE2 pattern; empty = none
  std::unique_ptr<re2::RE2> re_;  // match_, compiled
  stamp::Zone zone_;              // of stamps without an offset
  int year_ = 0;
  std::unique_ptr<Memos> memos_;
  std::string field_;  // { field = "..." }; empty = none
  // Reads field_ (mutable like the memos: a LogTime is one thread's own copy).
  std::unique_ptr<JsonFields> json_;
};

}  // namespace swthrottle::match
