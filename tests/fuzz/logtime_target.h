// The timestamp parser (match/logtime.h) under every `timestamp` setting.
//
// Input: byte 0 picks the setting (each named form, auto, a `match` pattern,
// a JSON `field`, or a strptime format), byte 1 the zone, the year and "now";
// for a strptime setting the first line after them is the format. The rest
// is log lines, parsed in order by one LogTime (so its memos of the last
// stamp are used), and each also by a fresh copy (memos empty): the contract
// says both give the same time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/rules.h"
#include "fuzz/fuzz_check.h"
#include "match/logtime.h"
#include "match/strptime_format.h"

namespace swthrottle::fuzz {

inline void logtime_one_input(const uint8_t* data, std::size_t size) {
  if (size < 2) return;
  using Form = config::TimestampSpec::Form;
  std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  config::TimestampSpec spec;
  switch (data[0] % 14) {
    case 0: spec.form = Form::Auto; break;
    case 1: spec.form = Form::Rfc3339; break;
    case 2: spec.form = Form::Syslog; break;
    case 3: spec.form = Form::Epoch; break;
    case 4: spec.form = Form::Clf; break;
    case 5: spec.form = Form::YmdSlash; break;
    case 6: spec.form = Form::IsoBasic; break;
    case 7: spec.form = Form::JsonEpoch; break;
    case 8: spec.match = R"(\[([^\]]*)\])"; break;  // auto, in a capture
    case 9:
      spec.form = Form::Syslog;
      spec.match = R"(at=(.{15}))";
      break;
    case 10: spec.field = "ts"; break;
    case 11: spec.field = "event.time"; break;
    default: {  // a strptime format: the first line
      spec.form = Form::Strptime;
      const std::size_t nl = rest.find('\n');
      spec.format = std::string(rest.substr(0, nl));
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      auto compiled = match::stamp::StrptimeFormat::compile(spec.format);
      if (!compiled.ok()) {
        FUZZ_CHECK(!compiled.error().what.empty());
        return;
      }
      break;
    }
  }
  config::TimezoneSpec tz;
  switch (data[1] & 3) {
    case 0: break;  // local: TZ, which the harness sets to a zone with DST
    case 1: tz = {false, 0, "UTC"}; break;
    case 2: tz = {false, 330, "+05:30"}; break;
    default: tz = {false, -720, "-12:00"}; break;
  }
  const int year = (data[1] >> 2) & 1 ? 2024 : 0;
  static constexpr int64_t kNows[] = {1'795'255'200'000, 0, 951'782'400'000, 253'402'300'799'000};
  const int64_t now = kNows[(data[1] >> 3) & 3];

  auto lt = match::LogTime::make(spec, tz, year);
  if (!lt.ok()) {
    FUZZ_CHECK(!lt.error().what.empty());
    return;
  }
  int lines = 0;
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    const std::optional<int64_t> t = lt->parse(line, now);
    if (++lines <= 8) {
      const match::LogTime fresh(*lt);  // a copy starts with memos of its own, empty
      FUZZ_CHECK(fresh.parse(line, now) == t);
    }
  }
}

}  // namespace swthrottle::fuzz
