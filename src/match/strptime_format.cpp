#include "match/strptime_format.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "match/stamp_bytes.h"

namespace swthrottle::match::stamp {
namespace {

using std::size_t;

// %s: seconds since 1970 of up to 11 digits, up to the year 5138.
constexpr size_t kMaxEpochDigits = 11;

constexpr const char* kMonths[12] = {"January", "February", "March",     "April",   "May",      "June",
                                     "July",    "August",   "September", "October", "November", "December"};
constexpr const char* kWeekdays[7] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};

// A full or three-letter English name at s[i], case-insensitive, the full name
// preferred: its index, advancing i; or -1.
int name_at(std::string_view s, size_t& i, const char* const* names, int count) {
  auto matches = [&](const char* name, size_t len) {
    if (i + len > s.size()) return false;
    for (size_t k = 0; k < len; ++k) {
      if (lower(s[i + k]) != lower(name[k])) return false;
    }
    return true;
  };
  for (int n = 0; n < count; ++n) {
    const size_t len = std::strlen(names[n]);
    if (matches(names[n], len)) {
      i += len;
      return n;
    }
  }
  for (int n = 0; n < count; ++n) {
    if (matches(names[n], 3)) {
      i += 3;
      return n;
    }
  }
  return -1;
}

// Reads 1..width digits at s[i] after optional spaces (as strptime does).
bool number_at(std::string_view s, size_t& i, size_t width, int& v) {
  while (i < s.size() && s[i] == ' ') ++i;
  const size_t start = i;
  v = 0;
  while (i < s.size() && i - start < width && is_digit(s[i])) v = v * 10 + (s[i++] - '0');
  return i > start;
}

}  // namespace

Result<StrptimeFormat> StrptimeFormat::compile(const std::string& fmt) {
  StrptimeFormat out;
  auto bad = [&](const std::string& why) {
    return Error{.file = {}, .line = 0, .col = 0, .what = "invalid timestamp format \"" + fmt + "\": " + why};
  };
  auto add = [&](char code, char literal = 0) {
    if (code == ' ' && !out.ops_.empty() && out.ops_.back().code == ' ') return;
    out.ops_.push_back(Op{code, literal});
  };
  bool day = false, month = false, yday = false, epoch = false;
  for (size_t i = 0; i < fmt.size(); ++i) {
    const char c = fmt[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      add(' ');
      continue;
    }
    if (c != '%') {
      add('L', c);
      continue;
    }
    if (++i == fmt.size()) return bad("it ends with a lone %");
    const char d = fmt[i];
    switch (d) {
      case 'Y':
      case 'y':
      case 'H':
      case 'I':
      case 'M':
      case 'S':
      case 'f':
      case 'a':
      case 'A':
      case 'z':
      case 'Z':
      case 'p': add(d); break;
      case 'm':
      case 'b':
      case 'B':
      case 'h':
        add(d == 'm' ? 'm' : 'b');
        month = true;
        break;
      case 'd':
      case 'e':
        add('d');
        day = true;
        break;
      case 'j':
        add('j');
        yday = true;
        break;
      case 's':
        add('s');
        epoch = true;
        break;
      case 'T':
        add('H');
        add('L', ':');
        add('M');
        add('L', ':');
        add('S');
        break;
      case 'R':
        add('H');
        add('L', ':');
        add('M');
        break;
      case 'D':
        add('m');
        add('L', '/');
        add('d');
        add('L', '/');
        add('y');
        day = month = true;
        break;
      case 'F':
        add('Y');
        add('L', '-');
        add('m');
        add('L', '-');
        add('d');
        day = month = true;
        break;
      case 'n':
      case 't': add(' '); break;
      case '%': add('L', '%'); break;
      default:
        return bad(std::string("unsupported conversion %") + d +
                   " (supported: %Y %y %m %d %e %j %H %I %M %S %f %p %b %h %B %a %A %z %Z %s %T %R %D %F %n %t %%)");
    }
  }
  if (!(day && month) && !yday && !epoch) {
    return bad("it has no date (it needs %d with %m or %b, or %F, %D, %j or %s)");
  }
  return out;
}

bool StrptimeFormat::read(std::string_view s, Fields& f) const {
  size_t i = 0;
  for (const Op& op : ops_) {
    int v = 0;
    switch (op.code) {
      case ' ':
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
        break;
      case 'L':
        if (i >= s.size() || s[i] != op.literal) return false;
        ++i;
        break;
      case 'Y':
        if (!number_at(s, i, 4, f.year)) return false;
        break;
      case 'y':
        if (!number_at(s, i, 2, v)) return false;
        f.year = v < 69 ? 2000 + v : 1900 + v;  // POSIX: 69-99 are 19xx
        break;
      case 'm':
        if (!number_at(s, i, 2, f.month) || f.month == 0) return false;
        break;
      case 'd':
        if (!number_at(s, i, 2, f.day)) return false;
        break;
      case 'j':
        if (!number_at(s, i, 3, f.yday) || f.yday == 0) return false;
        break;
      case 'H':
        if (!number_at(s, i, 2, f.hour)) return false;
        f.hour12 = false;
        break;
      case 'I':
        if (!number_at(s, i, 2, f.hour) || f.hour < 1 || f.hour > 12) return false;
        f.hour12 = true;
        break;
      case 'M':
        if (!number_at(s, i, 2, f.minute)) return false;
        break;
      case 'S':
        if (!number_at(s, i, 2, f.second)) return false;
        break;
      case 'f':
        if (i >= s.size() || !is_digit(s[i])) return false;
        i = fraction(s, i, f.ms);
        break;
      case 'b':
        f.month = name_at(s, i, kMonths, 12) + 1;
        if (f.month == 0) return false;
        break;
      case 'a':
      case 'A':
        if (name_at(s, i, kWeekdays, 7) < 0) return false;
        break;
      case 'p':
        if (i + 2 > s.size() || lower(s[i + 1]) != 'm' || (lower(s[i]) != 'a' && lower(s[i]) != 'p')) return false;
        f.pm = lower(s[i]) == 'p';
        i += 2;
        break;
      case 'z': {
        size_t end = i;
        if (offset_at(s, i, f.offset_s, end) != Offset::Ok) return false;
        f.has_offset = true;
        i = end;
        break;
      }
      case 'Z': {
        // Like glibc, a zone name is read and ignored, but names that mean
        // UTC are honoured: other abbreviations are ambiguous ("IST").
        const size_t start = i;
        while (i < s.size() && is_alpha(s[i])) ++i;
        const std::string_view name = s.substr(start, i - start);
        if (name.empty()) return false;
        if (name == "UTC" || name == "GMT" || name == "UT" || name == "Z") {
          f.has_offset = true;
          f.offset_s = 0;
        }
        break;
      }
      case 's': {
        // Seconds: at most 11 digits (up to the year 5138). Longer runs
        // are read whole and refused rather than cut: a 13-digit number is
        // epoch milliseconds, whose first 12 digits as seconds made a date
        // in the year 55000 (the `epoch` form reads those by their digits).
        const size_t start = i;
        int64_t e = 0;
        while (i < s.size() && is_digit(s[i])) {
          if (i - start == kMaxEpochDigits) return false;
          e = e * 10 + (s[i++] - '0');
        }
        if (i == start) return false;
        f.has_epoch = true;
        f.epoch_s = e;
        break;
      }
      default: return false;
    }
  }
  return true;
}

}  // namespace swthrottle::match::stamp
