#include "match/logtime.h"

#include <re2/re2.h>
#include <time.h>

#include <climits>
#include <cstring>
#include <utility>

namespace swthrottle::match {

namespace detail {

constexpr int kUnset = INT_MIN;

struct Fields {
  int year = kUnset;  // kUnset: infer (SPEC §4)
  int month = 0;      // 1..12; 0 = not given (then yday must be)
  int day = 0;
  int yday = 0;       // %j, used only without a month
  int hour = 0;
  int minute = 0;
  int second = 0;
  int ms = 0;
  bool hour12 = false;  // %I: hour is on a 12-hour clock
  bool pm = false;
  bool has_offset = false;
  int64_t offset_s = 0;
  bool has_epoch = false;  // %s: an absolute time; the other fields are ignored but ms
  int64_t epoch_s = 0;
};

}  // namespace detail

namespace {

using detail::FormatOp;
using detail::kUnset;
using Fields = detail::Fields;

constexpr int64_t kDayMs = 86'400'000;
constexpr size_t kNpos = std::string_view::npos;

constexpr const char* kMonths[12] = {"January", "February", "March",     "April",   "May",      "June",
                                     "July",    "August",   "September", "October", "November", "December"};
constexpr const char* kWeekdays[7] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_alpha(char c) {
  const char l = static_cast<char>(c | 0x20);
  return l >= 'a' && l <= 'z';
}
inline char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c | 0x20) : c; }

constexpr int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
// days_from_civil: shifting the year to start in March puts Feb 29 last, so
// the day of the year follows from the month by one linear formula).
constexpr int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;                                  // [0, 399]
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;          // [0, 146096]
  return era * 146097 + doe - 719468;
}

struct Civil {
  int64_t year;
  int month;
  int day;
};

constexpr Civil civil_from_days(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {yoe + era * 400 + (m <= 2), m, d};
}

static_assert(days_from_civil(1970, 1, 1) == 0);
static_assert(days_from_civil(2000, 3, 1) == 11017);
static_assert(civil_from_days(11017).year == 2000 && civil_from_days(11017).month == 3);

constexpr bool is_leap(int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

constexpr int days_in_month(int64_t y, int m) {
  constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

// Two digits at s[i], or -1.
inline int two_digits(std::string_view s, size_t i) {
  if (i + 2 > s.size() || !is_digit(s[i]) || !is_digit(s[i + 1])) return -1;
  return (s[i] - '0') * 10 + (s[i + 1] - '0');
}

// `width` digits at s[i], or -1.
inline int digits(std::string_view s, size_t i, size_t width) {
  if (i + width > s.size()) return -1;
  int v = 0;
  for (size_t k = i; k < i + width; ++k) {
    if (!is_digit(s[k])) return -1;
    v = v * 10 + (s[k] - '0');
  }
  return v;
}

// The digits of a fraction starting at s[i] (a digit): milliseconds, with
// digits past the third cut off. Returns the end of the digits.
inline size_t fraction(std::string_view s, size_t i, int& ms) {
  int v = 0;
  size_t k = i;
  for (; k < s.size() && is_digit(s[k]); ++k) {
    if (k - i < 3) v = v * 10 + (s[k] - '0');
  }
  for (size_t len = k - i; len < 3; ++len) v *= 10;
  ms = v;
  return k;
}

// "Jan".."Dec" exactly as syslog and CLF write them (title case) at s[i]: 1..12, or 0.
inline int month_abbr(std::string_view s, size_t i) {
  if (i + 3 > s.size()) return 0;
  static constexpr char kAbbr[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
  for (int m = 0; m < 12; ++m) {
    if (std::memcmp(s.data() + i, kAbbr + 3 * m, 3) == 0) return m + 1;
  }
  return 0;
}

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

enum class Offset { None, Bad, Ok };

// A UTC offset at s[i]: "Z", "+hh", "+hhmm" or "+hh:mm" (or '-'). None when
// nothing there looks like one; Bad when a sign and two digits start one that
// is out of range or runs on into more digits ("+25:00", "+02001").
Offset offset_at(std::string_view s, size_t i, int64_t& offset_s, size_t& end) {
  if (i >= s.size()) return Offset::None;
  const char c = s[i];
  if (c == 'Z' || c == 'z') {
    offset_s = 0;
    end = i + 1;
    return Offset::Ok;
  }
  if (c != '+' && c != '-') return Offset::None;
  const int hh = two_digits(s, i + 1);
  if (hh < 0) return Offset::None;
  size_t j = i + 3;
  int mm = 0;
  if (j < s.size() && s[j] == ':' && two_digits(s, j + 1) >= 0) {
    mm = two_digits(s, j + 1);
    j += 3;
  } else if (two_digits(s, j) >= 0) {
    mm = two_digits(s, j);
    j += 2;
  }
  if (j < s.size() && is_digit(s[j])) return Offset::Bad;
  if (hh > 23 || mm > 59) return Offset::Bad;
  offset_s = (c == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
  end = j;
  return Offset::Ok;
}

// "HH:MM:SS" at s[i] into f; returns the end or kNpos.
inline size_t hms_at(std::string_view s, size_t i, Fields& f) {
  f.hour = two_digits(s, i);
  f.minute = two_digits(s, i + 3);
  f.second = two_digits(s, i + 6);
  if (f.hour < 0 || f.minute < 0 || f.second < 0 || s[i + 2] != ':' || s[i + 5] != ':') return kNpos;
  return i + 8;
}

// An optional ".123" / ",123" at s[i]; returns the end.
inline size_t optional_fraction(std::string_view s, size_t i, Fields& f) {
  if (i + 1 < s.size() && (s[i] == '.' || s[i] == ',') && is_digit(s[i + 1])) return fraction(s, i + 1, f.ms);
  return i;
}

// RFC 3339 / ISO 8601 at s[i], where four digits and '-' are known to start:
// YYYY-MM-DD('T'|'t'|' ')HH:MM[:SS[(.|,)frac]][Z|+hh[[:]mm]].
bool rfc3339_at(std::string_view s, size_t i, Fields& f) {
  f.year = digits(s, i, 4);
  f.month = two_digits(s, i + 5);
  f.day = two_digits(s, i + 8);
  size_t j = i + 10;
  if (f.month < 0 || f.day < 0 || s[i + 7] != '-' || j >= s.size()) return false;
  if (s[j] != 'T' && s[j] != 't' && s[j] != ' ') return false;
  f.hour = two_digits(s, j + 1);
  f.minute = two_digits(s, j + 4);
  if (f.hour < 0 || f.minute < 0 || s[j + 3] != ':') return false;
  j += 6;
  if (j < s.size() && s[j] == ':') {
    f.second = two_digits(s, j + 1);
    if (f.second < 0) return false;
    j = optional_fraction(s, j + 3, f);
  }
  if (j < s.size() && is_digit(s[j])) return false;
  size_t end = j;
  switch (offset_at(s, j, f.offset_s, end)) {
    case Offset::Bad: return false;
    case Offset::Ok: f.has_offset = true; break;
    case Offset::None: break;
  }
  return true;
}

// Syslog at s[i], where a three-letter word is known to start:
// "Mon dd HH:MM:SS" or "Mon  d HH:MM:SS" (also "Mon d"), an optional fraction,
// and an optional " YYYY" as ctime() writes it ("Dec 04 04:47:44 2005").
bool syslog_at(std::string_view s, size_t i, Fields& f) {
  f.month = month_abbr(s, i);
  size_t j = i + 3;
  if (f.month == 0 || j >= s.size() || s[j] != ' ') return false;
  ++j;
  const bool padded = j < s.size() && s[j] == ' ';  // "Jul  1"
  if (padded) ++j;
  if (j >= s.size() || !is_digit(s[j])) return false;
  f.day = s[j++] - '0';
  if (!padded && j < s.size() && is_digit(s[j])) f.day = f.day * 10 + (s[j++] - '0');
  if (j >= s.size() || s[j] != ' ') return false;
  j = hms_at(s, j + 1, f);
  if (j == kNpos) return false;
  j = optional_fraction(s, j, f);
  if (j + 5 <= s.size() && s[j] == ' ') {
    const int y = digits(s, j + 1, 4);
    const char after = j + 5 < s.size() ? s[j + 5] : ' ';
    if (y >= 0 && (after == ' ' || after == '\t' || after == ']' || after == ')')) {
      f.year = y;
      return true;
    }
  }
  return j >= s.size() || !is_digit(s[j]);
}

// Common log format at s[i] == '[': "[dd/Mon/yyyy:HH:MM:SS +zzzz]" (the
// offset may be left out).
bool clf_at(std::string_view s, size_t i, Fields& f) {
  f.day = two_digits(s, i + 1);
  f.month = month_abbr(s, i + 4);
  f.year = digits(s, i + 8, 4);
  if (f.day < 0 || f.month == 0 || f.year < 0 || s[i + 3] != '/' || s[i + 7] != '/' || s.size() < i + 21 ||
      s[i + 12] != ':')
    return false;
  size_t j = hms_at(s, i + 13, f);
  if (j == kNpos) return false;
  if (j < s.size() && s[j] == ' ') {
    size_t end = j;
    if (offset_at(s, j + 1, f.offset_s, end) != Offset::Ok) return false;
    f.has_offset = true;
    j = end;
  }
  return j < s.size() && s[j] == ']';
}

// Epoch seconds (10 digits, optional ".frac") or milliseconds (13 digits) at
// the very start of s, not followed by another digit.
std::optional<int64_t> epoch_at_start(std::string_view s) {
  size_t k = 0;
  int64_t v = 0;
  while (k < s.size() && k < 14 && is_digit(s[k])) v = v * 10 + (s[k++] - '0');
  if (k == 13 && (k == s.size() || !is_digit(s[k]))) return v;
  if (k != 10) return std::nullopt;
  int ms = 0;
  if (k + 1 < s.size() && s[k] == '.' && is_digit(s[k + 1])) fraction(s, k + 1, ms);
  return v * 1000 + ms;
}

// What a byte can start, for the search: most bytes start nothing and are
// skipped by one table lookup.
enum : uint8_t { kNothing = 0, kDigit, kLetter, kBracket };
constexpr std::array<uint8_t, 256> kByteClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = kDigit;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = kLetter;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = kLetter;
  t['['] = kBracket;
  return t;
}();

// Reads 1..width digits at s[i] after optional spaces (as strptime does).
bool number_at(std::string_view s, size_t& i, size_t width, int& v) {
  while (i < s.size() && s[i] == ' ') ++i;
  const size_t start = i;
  v = 0;
  while (i < s.size() && i - start < width && is_digit(s[i])) v = v * 10 + (s[i++] - '0');
  return i > start;
}

bool is_named_form(std::string_view f) {
  return f == "auto" || f == "rfc3339" || f == "syslog" || f == "epoch" || f == "clf";
}

}  // namespace

LogTime::ZoneCache::ZoneCache() {
  for (auto& slot : slots) slot.store(static_cast<uint32_t>(INT32_MIN), std::memory_order_relaxed);
}

LogTime::LogTime(LogTime&&) noexcept = default;
LogTime& LogTime::operator=(LogTime&&) noexcept = default;
LogTime::~LogTime() = default;

LogTime::LogTime(const LogTime& other)
    : kind_(other.kind_),
      ops_(other.ops_),
      match_(other.match_),
      local_(other.local_),
      offset_s_(other.offset_s_),
      year_(other.year_),
      from_local_(std::make_unique<ZoneCache>()),
      from_utc_(std::make_unique<ZoneCache>()) {
  std::string ignored;
  compile_match(&ignored);  // cannot fail: the pattern compiled before
}

LogTime& LogTime::operator=(const LogTime& other) {
  if (this != &other) *this = LogTime(other);
  return *this;
}

bool LogTime::compile_match(std::string* error) {
  re_.reset();
  if (match_.empty()) return true;
  RE2::Options options;
  options.set_log_errors(false);
  re_ = std::make_unique<RE2>(match_, options);
  if (!re_->ok()) {
    *error = re_->error();
    return false;
  }
  return true;
}

Result<LogTime> LogTime::make(const config::TimestampSpec& spec, const config::TimezoneSpec& tz, int year) {
  LogTime lt;
  lt.local_ = tz.local;
  lt.offset_s_ = static_cast<int64_t>(tz.offset_minutes) * 60;
  lt.year_ = year;
  lt.from_local_ = std::make_unique<ZoneCache>();
  lt.from_utc_ = std::make_unique<ZoneCache>();

  using Form = config::TimestampSpec::Form;
  Form form = spec.form;
  // `format = "syslog"` next to `match` names a form, not a strptime format.
  if (form == Form::Strptime && is_named_form(spec.format)) {
    form = spec.format == "rfc3339" ? Form::Rfc3339
           : spec.format == "syslog" ? Form::Syslog
           : spec.format == "epoch"  ? Form::Epoch
           : spec.format == "clf"    ? Form::Clf
                                     : Form::Auto;
  }
  switch (form) {
    case Form::Auto: lt.kind_ = Kind::Auto; break;
    case Form::Rfc3339: lt.kind_ = Kind::Rfc3339; break;
    case Form::Syslog: lt.kind_ = Kind::Syslog; break;
    case Form::Epoch: lt.kind_ = Kind::Epoch; break;
    case Form::Clf: lt.kind_ = Kind::Clf; break;
    case Form::Strptime: lt.kind_ = Kind::Strptime; break;
  }

  if (lt.kind_ == Kind::Strptime) {
    const std::string& fmt = spec.format;
    auto bad = [&](const std::string& why) {
      return Error{.file = {}, .line = 0, .col = 0, .what = "invalid timestamp format \"" + fmt + "\": " + why};
    };
    auto add = [&](char code, char literal = 0) {
      if (code == ' ' && !lt.ops_.empty() && lt.ops_.back().code == ' ') return;
      lt.ops_.push_back(FormatOp{code, literal});
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
        case 'Y': case 'y': case 'H': case 'I': case 'M': case 'S': case 'f':
        case 'a': case 'A': case 'z': case 'Z': case 'p':
          add(d);
          break;
        case 'm': case 'b': case 'B': case 'h':
          add(d == 'm' ? 'm' : 'b');
          month = true;
          break;
        case 'd': case 'e':
          add('d');
          day = true;
          break;
        case 'j': add('j'); yday = true; break;
        case 's': add('s'); epoch = true; break;
        case 'T': add('H'); add('L', ':'); add('M'); add('L', ':'); add('S'); break;
        case 'R': add('H'); add('L', ':'); add('M'); break;
        case 'D': add('m'); add('L', '/'); add('d'); add('L', '/'); add('y'); day = month = true; break;
        case 'F': add('Y'); add('L', '-'); add('m'); add('L', '-'); add('d'); day = month = true; break;
        case 'n': case 't': add(' '); break;
        case '%': add('L', '%'); break;
        default:
          return bad(std::string("unsupported conversion %") + d +
                     " (supported: %Y %y %m %d %e %j %H %I %M %S %f %p %b %h %B %a %A %z %Z %s %T %R %D %F %n %t %%)");
      }
    }
    if (!(day && month) && !yday && !epoch) {
      return bad("it has no date (it needs %d with %m or %b, or %F, %D, %j or %s)");
    }
  }

  lt.match_ = spec.match;
  std::string re_error;
  if (!lt.compile_match(&re_error)) {
    return Error{.file = {}, .line = 0, .col = 0, .what = "invalid timestamp match '" + spec.match + "': " + re_error};
  }
  if (lt.re_ && lt.re_->NumberOfCapturingGroups() < 1) {
    return Error{.file = {},
                 .line = 0,
                 .col = 0,
                 .what = "timestamp match '" + spec.match + "' has no capture group: put the timestamp in ( )"};
  }
  return lt;
}

std::optional<int64_t> LogTime::parse(std::string_view line, int64_t wall_now_ms) const {
  if (!re_) return parse_text(line, wall_now_ms);
  re2::StringPiece groups[2];
  if (!re_->Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::UNANCHORED, groups, 2) ||
      groups[1].data() == nullptr) {
    return std::nullopt;
  }
  return parse_text(std::string_view(groups[1].data(), groups[1].size()), wall_now_ms);
}

std::optional<int64_t> LogTime::parse_text(std::string_view text, int64_t wall_now_ms) const {
  if (kind_ != Kind::Strptime) return search(text, wall_now_ms);
  Fields f;
  if (!run_format(text, f)) return std::nullopt;
  return finish(f, wall_now_ms);
}

// Leftmost first. Only the bytes that can start a stamp are looked at: the
// first digit of a run (RFC 3339 needs exactly four, then '-'), the first
// letter of a word (syslog needs a three-letter month), and '['.
std::optional<int64_t> LogTime::search(std::string_view s, int64_t wall_now_ms) const {
  const bool any = kind_ == Kind::Auto;
  if (any || kind_ == Kind::Epoch) {
    if (auto t = epoch_at_start(s)) return t;
    if (!any) return std::nullopt;
  }
  const bool rfc = any || kind_ == Kind::Rfc3339;
  const bool syslog = any || kind_ == Kind::Syslog;
  const bool clf = any || kind_ == Kind::Clf;
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    switch (kByteClass[static_cast<unsigned char>(s[i])]) {
      case kNothing:
        ++i;
        break;
      case kDigit: {
        size_t j = i + 1;
        while (j < n && is_digit(s[j])) ++j;
        if (rfc && j - i == 4 && j < n && s[j] == '-') {
          Fields f;
          if (rfc3339_at(s, i, f)) {
            if (auto t = finish(f, wall_now_ms)) return t;
          }
        }
        i = j;
        break;
      }
      case kLetter: {
        size_t j = i + 1;
        while (j < n && is_alpha(s[j])) ++j;
        if (syslog && j - i == 3) {
          Fields f;
          if (syslog_at(s, i, f)) {
            if (auto t = finish(f, wall_now_ms)) return t;
          }
        }
        i = j;
        break;
      }
      case kBracket: {
        if (clf) {
          Fields f;
          if (clf_at(s, i, f)) {
            if (auto t = finish(f, wall_now_ms)) return t;
          }
        }
        ++i;
        break;
      }
    }
  }
  return std::nullopt;
}

bool LogTime::run_format(std::string_view s, Fields& f) const {
  size_t i = 0;
  for (const FormatOp& op : ops_) {
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
        const size_t start = i;
        int64_t e = 0;
        while (i < s.size() && i - start < 12 && is_digit(s[i])) e = e * 10 + (s[i++] - '0');
        if (i == start) return false;
        f.has_epoch = true;
        f.epoch_s = e;
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

// Validates the fields and fills in what the stamp does not say: the year
// (SPEC §4) and the zone.
std::optional<int64_t> LogTime::finish(Fields& f, int64_t wall_now_ms) const {
  if (f.has_epoch) return f.epoch_s * 1000 + f.ms;
  if (f.hour12) f.hour = f.hour % 12 + (f.pm ? 12 : 0);
  if (f.hour > 23 || f.minute > 59 || f.second > 60) return std::nullopt;
  if (f.second == 60) {
    // A leap second: :59.999 keeps it after :59 and before the next minute.
    f.second = 59;
    f.ms = 999;
  }
  if (f.year != kUnset) return to_utc_ms(f, f.year);
  if (year_ != 0) return to_utc_ms(f, year_);
  const int y = zone_year(wall_now_ms);
  if (auto t = to_utc_ms(f, y); t && *t <= wall_now_ms + kDayMs) return t;
  return to_utc_ms(f, y - 1);
}

std::optional<int64_t> LogTime::to_utc_ms(const Fields& f, int year) const {
  int month = f.month;
  int day = f.day;
  if (month == 0) {
    if (f.yday < 1 || f.yday > (is_leap(year) ? 366 : 365)) return std::nullopt;
    const Civil c = civil_from_days(days_from_civil(year, 1, 1) + f.yday - 1);
    month = c.month;
    day = c.day;
  }
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month)) return std::nullopt;
  const int64_t local_s = days_from_civil(year, month, day) * 86400 + f.hour * 3600 + f.minute * 60 + f.second;
  const int64_t offset_s = f.has_offset ? f.offset_s : local_ ? offset_of_local(local_s) : offset_s_;
  return (local_s - offset_s) * 1000 + f.ms;
}

int LogTime::zone_year(int64_t wall_now_ms) const {
  const int64_t utc_s = floor_div(wall_now_ms, 1000);
  const int64_t local_s = utc_s + (local_ ? offset_of_utc(utc_s) : offset_s_);
  return static_cast<int>(civil_from_days(floor_div(local_s, 86400)).year);
}

namespace {

// Every zone in use since the 1970s changes its offset only on a quarter hour
// (of local time and of UTC), so the offset at the start of a quarter hour
// holds for all of it. Keys beyond int32 (years past ±60000) skip the cache.
template <typename Compute>
int64_t cached_offset(std::array<std::atomic<uint64_t>, 64>& slots, int64_t s, Compute compute) {
  const int64_t key = floor_div(s, 900);
  if (key < INT32_MIN || key > INT32_MAX) return compute(s);
  std::atomic<uint64_t>& slot = slots[static_cast<uint32_t>(key) % slots.size()];
  const uint64_t packed = slot.load(std::memory_order_relaxed);
  const auto cached = static_cast<int32_t>(static_cast<uint32_t>(packed));
  if (static_cast<int32_t>(packed >> 32) == key && cached != INT32_MIN) return cached;
  const int64_t offset = compute(key * 900);
  slot.store((static_cast<uint64_t>(static_cast<uint32_t>(key)) << 32) | static_cast<uint32_t>(offset),
             std::memory_order_relaxed);
  return offset;
}

int64_t gmtoff_at(int64_t utc_s) {
  const time_t t = static_cast<time_t>(utc_s);
  struct tm tm {};
  if (localtime_r(&t, &tm) == nullptr) return 0;
  return tm.tm_gmtoff;
}

}  // namespace

int64_t LogTime::offset_of_local(int64_t local_s) const {
  return cached_offset(from_local_->slots, local_s, [](int64_t s) -> int64_t {
    const Civil c = civil_from_days(floor_div(s, 86400));
    const int64_t sod = s - floor_div(s, 86400) * 86400;
    struct tm tm {};
    tm.tm_year = static_cast<int>(c.year - 1900);
    tm.tm_mon = c.month - 1;
    tm.tm_mday = c.day;
    tm.tm_hour = static_cast<int>(sod / 3600);
    tm.tm_min = static_cast<int>(sod / 60 % 60);
    tm.tm_sec = static_cast<int>(sod % 60);
    tm.tm_isdst = -1;  // let the zone rules decide
    const time_t t = mktime(&tm);
    // -1 is also a valid time, but not for a whole quarter hour in any real zone.
    if (t == static_cast<time_t>(-1)) return gmtoff_at(s);
    return s - static_cast<int64_t>(t);
  });
}

int64_t LogTime::offset_of_utc(int64_t utc_s) const { return cached_offset(from_utc_->slots, utc_s, gmtoff_at); }

}  // namespace swthrottle::match
