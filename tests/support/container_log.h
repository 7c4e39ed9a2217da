// Container logs written the way the runtimes write them, for tests of
// `format = "cri"` and "docker" (input/envelope_framer.h):
// - cri_record(): containerd's CRI logger (its redirectLogs): a line longer
//   than max_container_log_line_size (16 KiB) goes out as P records of
//   exactly that many bytes and an F with the rest; the times are
//   RFC3339Nano, trailing zeros of the fraction dropped (Go's format);
// - docker_record(): dockerd's json-file (jsonfilelog + its copier): the
//   line in "log" with its "\n", split by the copier's 16 KiB buffer into
//   records whose "log" has no "\n" until the last; Go's JSON escaping
//   (<, >, & as \u003c..., invalid UTF-8 as \ufffd).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace swthrottle::test {

constexpr std::size_t kRuntimeLineMax = 16 * 1024;

// Go's time.RFC3339Nano of ms since the epoch, in UTC ("Z"), or at a
// fixed offset east of UTC (offset_min != 0: "+01:00"), with `ns_extra`
// nanoseconds below the ms.
inline std::string go_rfc3339nano(int64_t ms, int offset_min = 0, int ns_extra = 0) {
  const int64_t local_s = ms / 1000 + offset_min * 60;
  const int64_t days = local_s / 86400;
  const int64_t sod = local_s % 86400;
  // days -> civil (Howard Hinnant's algorithm)
  const int64_t z = days + 719468;
  const int64_t era = z / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld", static_cast<long long>(y),
                static_cast<long long>(m), static_cast<long long>(d), static_cast<long long>(sod / 3600),
                static_cast<long long>(sod / 60 % 60), static_cast<long long>(sod % 60));
  std::string out = buf;
  std::string frac = std::to_string(1000000000LL + (ms % 1000) * 1000000LL + ns_extra).substr(1);
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  if (!frac.empty()) out += "." + frac;
  if (offset_min == 0) return out + "Z";
  std::snprintf(buf, sizeof buf, "%c%02d:%02d", offset_min < 0 ? '-' : '+', std::abs(offset_min) / 60,
                std::abs(offset_min) % 60);
  return out + buf;
}

// The CRI records of one line the container wrote to `stream` (without
// its "\n"; `complete` false: the container's output ended without one).
inline std::string cri_record(std::string_view stream, std::string_view line, int64_t ms, bool complete = true,
                              int offset_min = 0) {
  std::string out;
  const std::string t = go_rfc3339nano(ms, offset_min, 123456);
  while (line.size() > kRuntimeLineMax) {
    out += t + " " + std::string(stream) + " P " + std::string(line.substr(0, kRuntimeLineMax)) + "\n";
    line.remove_prefix(kRuntimeLineMax);
  }
  out += t + " " + std::string(stream) + (complete ? " F " : " P ") + std::string(line) + "\n";
  return out;
}

// Go's encoding of a json-file "log" string.
inline std::string go_json_string(std::string_view s) {
  static const char* const kHex = "0123456789abcdef";
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else if (c >= 0x80) {
      // Copied when it starts well-formed UTF-8 (the tests use 2-byte ones), else U+FFFD.
      if ((c & 0xE0) == 0xC0 && i + 1 < s.size() && (static_cast<unsigned char>(s[i + 1]) & 0xC0) == 0x80) {
        out += s.substr(i, 2);
        ++i;
      } else {
        out += "\\ufffd";
      }
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// The json-file records of one line (without its "\n") written to `stream`.
inline std::string docker_record(std::string_view stream, std::string_view line, int64_t ms, bool complete = true,
                                 std::string_view attrs = "") {
  std::string out;
  auto record = [&](std::string_view text, bool last, int64_t at) {
    out += "{\"log\":" + go_json_string(std::string(text) + (last ? "\n" : "")) + ",\"stream\":\"" +
           std::string(stream) + "\"" + (attrs.empty() ? "" : ",\"attrs\":" + std::string(attrs)) + ",\"time\":\"" +
           go_rfc3339nano(at, 0, 987654) + "\"}\n";
  };
  int64_t at = ms;
  while (line.size() > kRuntimeLineMax) {
    record(line.substr(0, kRuntimeLineMax), false, at++);
    line.remove_prefix(kRuntimeLineMax);
  }
  record(line, complete, at);
  return out;
}

}  // namespace swthrottle::test
