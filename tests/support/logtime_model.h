// A deliberately plain model of time = "log", written from the contract
// (DESIGN.md §4, the man page's "Timestamps", the comment of match/logtime.h)
// for differential tests of LogTime: a cursor reads each form where the
// contract says a stamp may start, std::chrono does the calendar, mktime()
// and localtime_r() the local zone. No memo, no skipping ahead, no caches.
// It covers every form, zone and `match`; it does not check formats
// (LogTime::make's errors have tests of their own).
#pragma once

#include <re2/re2.h>
#include <time.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "config/rules.h"

namespace swthrottle::test {

class LogTimeModel {
 public:
  using Form = config::TimestampSpec::Form;

  LogTimeModel(const config::TimestampSpec& spec, const config::TimezoneSpec& tz, int year)
      : form_(spec.form),
        format_(spec.format),
        // A named zone is modelled by the machine's: the test sets TZ to its name.
        local_(tz.local || !tz.name.empty()),
        offset_s_(tz.offset_minutes * 60),
        year_(year) {
    // Next to `match`, a format that names a form means that form.
    for (const auto& [name, form] : {std::pair{"auto", Form::Auto},
                                     {"rfc3339", Form::Rfc3339},
                                     {"syslog", Form::Syslog},
                                     {"epoch", Form::Epoch},
                                     {"clf", Form::Clf},
                                     {"ymd_slash", Form::YmdSlash},
                                     {"iso_basic", Form::IsoBasic},
                                     {"json_epoch", Form::JsonEpoch}}) {
      if (form_ == Form::Strptime && format_ == name) form_ = form;
    }
    if (!spec.match.empty()) match_ = std::make_unique<RE2>(spec.match);
  }

  std::optional<int64_t> parse(std::string_view line, int64_t now_ms) const {
    re2::StringPiece group;  // with `match`: its first capture group, if that took part
    if (match_ && (!RE2::PartialMatch({line.data(), line.size()}, *match_, &group) || !group.data())) return {};
    if (match_) line = {group.data(), group.size()};
    if (form_ == Form::Auto && !match_ && line.starts_with('{')) {
      if (auto t = json_fields(line, now_ms)) return t;
    }
    return search(line, now_ms, true);
  }

 private:
  // timestamp = "auto", a line that is a JSON object (parsed here by
  // nlohmann::json, first key wins): the first of the stamp fields, in the
  // contract's order, whose value reads as a time.
  std::optional<int64_t> json_fields(std::string_view line, int64_t now_ms) const {
    // A raw NUL is never valid JSON (nlohmann's reader may take it for the end).
    if (line.find('\0') != std::string_view::npos) return {};
    std::set<std::string> seen;
    auto first_wins = [&seen](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
      if (depth == 1 && event == nlohmann::json::parse_event_t::key)
        return seen.insert(parsed.get<std::string>()).second;
      return true;
    };
    const nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), first_wins, false);
    if (!j.is_object()) return {};
    for (const char* key :
         {"ts", "time", "timestamp", "@timestamp", "datetime", "date", "T", "t", "eventTime", "__REALTIME_TIMESTAMP"}) {
      const auto it = j.find(key);
      if (it == j.end()) continue;
      std::string text;
      if (it->is_string()) {
        text = it->get<std::string>();
      } else if (it->is_number_integer() || it->is_number_unsigned()) {
        text = it->dump();
      } else if (it->is_number_float()) {
        text = it->dump();  // its shortest spelling: as written only if the line holds it so
        if (line.find(text) == std::string_view::npos) text = "e";
      } else {
        continue;
      }
      if (auto t = field_text(text, now_ms)) return t;
    }
    return {};
  }

  // A field's text: a number (digits and '.', by magnitude: < 1e8 none, then
  // s, ms, us, ns, a step of 1000 each); any other spelling of a number
  // (an exponent, a sign) none; else a stamp searched in the text.
  std::optional<int64_t> field_text(const std::string& text, int64_t now_ms) const {
    if (!text.empty() && digit(text[0]) && text.find_first_not_of("0123456789.eE+-") == std::string::npos) {
      const size_t dot = text.find('.');
      const std::string whole = text.substr(0, dot);
      if (whole.find_first_not_of("0123456789") != std::string::npos) return {};
      if (dot != std::string::npos &&
          (dot + 1 == text.size() || text.find_first_not_of("0123456789", dot + 1) != std::string::npos))
        return {};
      const std::string digits = whole.substr(std::min(whole.find_first_not_of('0'), whole.size()));
      if (digits.size() >= 20) return {};
      const uint64_t v = digits.empty() ? 0 : std::stoull(digits);
      int ms = 0;
      if (dot != std::string::npos) {
        const std::string frac = (text.substr(dot + 1) + "00").substr(0, 3);
        ms = std::stoi(frac);
      }
      if (v < 100000000ULL) return {};
      if (v < 100000000000ULL) return static_cast<int64_t>(v) * 1000 + ms;
      if (v < 100000000000000ULL) return static_cast<int64_t>(v);
      if (v < 100000000000000000ULL) return static_cast<int64_t>(v / 1000);
      return static_cast<int64_t>(v / 1000000);
    }
    return search(text, now_ms, false);
  }

  // The search of a line (or a field's text, where JSON epoch keys do not count).
  std::optional<int64_t> search(std::string_view line, int64_t now_ms, bool whole_line) const {
    Stamp st;
    if (form_ == Form::Strptime) return read_format({line}, st) ? finish(st, now_ms) : std::nullopt;
    const bool any = form_ == Form::Auto;
    if (any || form_ == Form::Epoch) {  // only at the very start of the line
      if (auto t = epoch(line)) return t;
      if (!any) return {};
    }
    if (any || form_ == Form::IsoBasic) {  // only at the very start of the line, too
      if (iso_basic({line, 0}, st))
        if (auto t = finish(st, now_ms)) return t;
      if (!any) return {};
      st = Stamp{};
    }
    // Leftmost first: a stamp starts where a run of digits or letters does, or at a '['.
    for (size_t i = 0, j = 1; i < line.size(); i = j, j = i + 1) {
      std::optional<int64_t> t;
      st = Stamp{};
      if (digit(line[i])) {
        while (j < line.size() && digit(line[j])) ++j;
        if ((any || form_ == Form::Rfc3339) && j - i == 4 && j < line.size() && line[j] == '-' &&
            rfc3339({line, i}, st)) {
          t = finish(st, now_ms);
        } else if ((any || form_ == Form::YmdSlash) && j - i == 4 && j < line.size() && line[j] == '/' &&
                   ymd_slash({line, i}, st)) {
          t = finish(st, now_ms);
        } else if ((any || form_ == Form::JsonEpoch) && whole_line && line.starts_with('{')) {
          t = json_epoch(line, i, j);
        }
      } else if (letter(line[i])) {
        while (j < line.size() && letter(line[j])) ++j;
        if ((any || form_ == Form::Syslog) && j - i == 3 && syslog({line, i}, st)) t = finish(st, now_ms);
      } else if (line[i] == '[' && (any || form_ == Form::Clf) && clf({line, i}, st)) {
        t = finish(st, now_ms);
      }
      if (t) return t;  // else the search goes on to the right
    }
    return {};
  }

  struct Stamp {
    std::optional<int> year;
    int month = 0, day = 0, yday = 0, hour = 0, minute = 0, second = 0, ms = 0;
    bool twelve_hour = false, pm = false;
    std::optional<int64_t> offset_s, epoch_s;
  };

  static bool digit(char c) { return c >= '0' && c <= '9'; }
  static bool letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
  static char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

  struct Cursor {
    std::string_view s;
    size_t i = 0;
    bool digit_at(size_t k = 0) const { return i + k < s.size() && digit(s[i + k]); }
    bool is(char c) const { return i < s.size() && s[i] == c; }
    bool eat(char c) { return is(c) ? (++i, true) : false; }
    bool num(size_t n, int& v) {  // exactly n digits
      for (size_t k = 0; k < n; ++k)
        if (!digit_at(k)) return false;
      for (v = 0; n > 0; --n) v = v * 10 + (s[i++] - '0');
      return true;
    }
    bool loose(size_t n, int& v) {  // 1..n digits after optional spaces (strptime)
      while (eat(' ')) {
      }
      size_t k = 0;
      while (k < n && digit_at(k)) ++k;
      return k > 0 && num(k, v);
    }
    int fraction() {  // milliseconds; digits past the third dropped
      int ms = 0;
      for (int k = 0; k < 3; ++k) ms = ms * 10 + (digit_at() ? s[i++] - '0' : 0);
      while (digit_at()) ++i;
      return ms;
    }
    void optional_fraction(Stamp& st) {
      if ((is('.') || is(',')) && digit_at(1)) st.ms = (++i, fraction());
    }
    bool hms(Stamp& st) { return num(2, st.hour) && eat(':') && num(2, st.minute) && eat(':') && num(2, st.second); }
  };

  // Z, or +hh, +hhmm, +hh:mm (or -): Ok with st.offset_s set; Bad when a sign
  // and two digits make no offset (out of range, more digits); else None.
  enum class Offset { None, Bad, Ok };
  static Offset offset(Cursor& c, Stamp& st) {
    if (c.eat('Z') || c.eat('z')) return st.offset_s = 0, Offset::Ok;
    if (!(c.is('+') || c.is('-')) || !c.digit_at(1) || !c.digit_at(2)) return Offset::None;
    const int sign = c.s[c.i++] == '-' ? -1 : 1;
    int hh = 0, mm = 0;
    c.num(2, hh);
    if (c.is(':') && c.digit_at(1) && c.digit_at(2)) ++c.i;
    if (c.digit_at() && c.digit_at(1)) c.num(2, mm);
    if (c.digit_at() || hh > 23 || mm > 59) return Offset::Bad;
    return st.offset_s = sign * (hh * 3600 + mm * 60), Offset::Ok;
  }

  // YYYY-MM-DD(T|t| )hh:mm[:ss[(.|,)frac]][offset], no digit after it.
  static bool rfc3339(Cursor c, Stamp& st) {
    int y = 0;
    if (!(c.num(4, y) && c.eat('-') && c.num(2, st.month) && c.eat('-') && c.num(2, st.day) &&
          (c.eat('T') || c.eat('t') || c.eat(' ')) && c.num(2, st.hour) && c.eat(':') && c.num(2, st.minute))) {
      return false;
    }
    st.year = y;
    if (c.eat(':')) {  // seconds, and then maybe a fraction
      if (!c.num(2, st.second)) return false;
      c.optional_fraction(st);
    }
    return !c.digit_at() && offset(c, st) != Offset::Bad;
  }

  // YYYY/MM/DD hh:mm:ss[(.|,)frac][offset], no digit after it.
  static bool ymd_slash(Cursor c, Stamp& st) {
    int y = 0;
    if (!(c.num(4, y) && c.eat('/') && c.num(2, st.month) && c.eat('/') && c.num(2, st.day) && c.eat(' ') &&
          c.hms(st))) {
      return false;
    }
    st.year = y;
    c.optional_fraction(st);
    return !c.digit_at() && offset(c, st) != Offset::Bad;
  }

  // YYYYMMDDThhmmss[(.|,)frac][offset], no digit after it.
  static bool iso_basic(Cursor c, Stamp& st) {
    int y = 0;
    if (!(c.num(4, y) && c.num(2, st.month) && c.num(2, st.day) && c.eat('T') && c.num(2, st.hour) &&
          c.num(2, st.minute) && c.num(2, st.second))) {
      return false;
    }
    st.year = y;
    c.optional_fraction(st);
    return !c.digit_at() && offset(c, st) != Offset::Bad;
  }

  // The digits line[i..j) as the value of a JSON key named for a time, in a
  // line that starts with '{':
  // "KEY" <blanks> ':' <blanks> ['"'] digits [.frac] ['"' if quoted].
  // 10 digits: s (+ fraction), 13: ms, 16: us, 19: ns.
  static std::optional<int64_t> json_epoch(std::string_view line, size_t i, size_t j) {
    const size_t n = j - i;
    if (n != 10 && n != 13 && n != 16 && n != 19) return {};
    std::string before(line.substr(0, i));
    const bool quoted = !before.empty() && before.back() == '"';
    if (quoted) before.pop_back();
    auto trim = [&] {
      while (!before.empty() && (before.back() == ' ' || before.back() == '\t')) before.pop_back();
    };
    trim();
    if (before.empty() || before.back() != ':') return {};
    before.pop_back();
    trim();
    bool keyed = false;
    for (const char* key : {"ts", "time", "timestamp", "@timestamp", "__REALTIME_TIMESTAMP"}) {
      keyed = keyed || before.ends_with(std::string("\"") + key + "\"");
    }
    if (!keyed) return {};
    Cursor c{line, j};
    int ms = 0;
    if (c.is('.') && c.digit_at(1)) ms = (++c.i, c.fraction());
    if (quoted ? !c.is('"') : (c.is('.') || c.is('e') || c.is('E'))) return {};
    const int64_t v = std::stoll(std::string(line.substr(i, n)));
    return n == 10 ? v * 1000 + ms : n == 13 ? v : n == 16 ? v / 1000 : v / 1000000;
  }

  // "Mon dd hh:mm:ss", "Mon  d ...", "Mon d ...", a fraction, a ctime year.
  static bool syslog(Cursor c, Stamp& st) {
    if ((st.month = month_abbr(c)) == 0 || !c.eat(' ')) return false;
    const bool padded = c.eat(' ');
    if (!c.num(padded || !c.digit_at(1) ? 1 : 2, st.day) || !c.eat(' ') || !c.hms(st)) return false;
    c.optional_fraction(st);
    Cursor year = c;  // " YYYY" and a space, tab, ']' or ')' (or the end)
    int y = 0;
    if (year.eat(' ') && year.num(4, y)) {
      const char next = year.i < c.s.size() ? c.s[year.i] : ' ';
      if (next == ' ' || next == '\t' || next == ']' || next == ')') return st.year = y, true;
    }
    return !c.digit_at();
  }

  // "[dd/Mon/yyyy:hh:mm:ss +zzzz]", the offset optional.
  static bool clf(Cursor c, Stamp& st) {
    int y = 0;
    if (!(c.eat('[') && c.num(2, st.day) && c.eat('/') && (st.month = month_abbr(c)) != 0 && c.eat('/') &&
          c.num(4, y) && c.eat(':') && c.hms(st))) {
      return false;
    }
    st.year = y;
    if (c.eat(' ') && offset(c, st) != Offset::Ok) return false;
    return c.is(']');
  }

  // Ten digits (seconds, then maybe '.' and a fraction) or thirteen (ms).
  static std::optional<int64_t> epoch(std::string_view s) {
    size_t n = 0;
    while (n < s.size() && digit(s[n])) ++n;
    if (n == 13) return std::stoll(std::string(s.substr(0, 13)));
    if (n != 10) return {};
    Cursor after_dot{s, 11};
    const int ms = s.size() > 11 && s[10] == '.' && digit(s[11]) ? after_dot.fraction() : 0;
    return std::stoll(std::string(s.substr(0, 10))) * 1000 + ms;
  }

  // "Jan".."Dec", title case: 1..12, or 0.
  static int month_abbr(Cursor& c) {
    for (int m = 0; m < 12; ++m) {
      if (c.s.substr(c.i, 3) == std::string_view("JanFebMarAprMayJunJulAugSepOctNovDec").substr(3 * m, 3)) {
        return c.i += 3, m + 1;
      }
    }
    return 0;
  }

  // An English name, any case, in full or its first three letters: its index, or -1.
  template <size_t N>
  static int name(Cursor& c, const char* const (&names)[N]) {
    auto at = [&](std::string_view want) {
      if (c.s.size() - c.i < want.size()) return false;
      for (size_t k = 0; k < want.size(); ++k)
        if (lower(c.s[c.i + k]) != lower(want[k])) return false;
      return c.i += want.size(), true;
    };
    for (size_t n = 0; n < N; ++n)
      if (at(names[n])) return static_cast<int>(n);
    for (size_t n = 0; n < N; ++n)
      if (at(std::string_view(names[n]).substr(0, 3))) return static_cast<int>(n);
    return -1;
  }

  // The strptime subset of the man page, at the start of the text.
  bool read_format(Cursor c, Stamp& st) const {
    static const char* const kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                                          "July",    "August",   "September", "October", "November", "December"};
    static const char* const kDays[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
    std::string f;  // the format with its shorthands spelled out
    for (size_t k = 0; k < format_.size(); ++k) {
      const char d = format_[k] == '%' && k + 1 < format_.size() ? format_[++k] : '\0';
      f += d == 'T'               ? "%H:%M:%S"
           : d == 'R'             ? "%H:%M"
           : d == 'D'             ? "%m/%d/%y"
           : d == 'F'             ? "%Y-%m-%d"
           : d == 'n' || d == 't' ? " "
           : d == '\0'            ? std::string(1, format_[k])
                                  : std::string("%") + d;
    }
    for (size_t k = 0; k < f.size(); ++k) {
      int v = 0;
      bool ok = true;
      switch (f[k] != '%' ? (f[k] == ' ' || f[k] == '\t' || f[k] == '\n' ? ' ' : 'L') : f[++k]) {
        case ' ':
          while (c.eat(' ') || c.eat('\t')) {
          }
          break;  // any run of spaces and tabs, also none
        case 'L':
        case '%': ok = c.eat(f[k]); break;
        case 'Y': ok = c.loose(4, v), st.year = v; break;
        case 'y': ok = c.loose(2, v), st.year = v < 69 ? 2000 + v : 1900 + v; break;
        case 'm': ok = c.loose(2, st.month) && st.month != 0; break;
        case 'd':
        case 'e': ok = c.loose(2, st.day); break;
        case 'j': ok = c.loose(3, st.yday) && st.yday != 0; break;
        case 'H': ok = c.loose(2, st.hour), st.twelve_hour = false; break;
        case 'I': ok = c.loose(2, st.hour) && st.hour >= 1 && st.hour <= 12, st.twelve_hour = true; break;
        case 'M': ok = c.loose(2, st.minute); break;
        case 'S': ok = c.loose(2, st.second); break;
        case 'f': ok = c.digit_at() && (st.ms = c.fraction(), true); break;
        case 'b':
        case 'B':
        case 'h': ok = (st.month = name(c, kMonths) + 1) != 0; break;
        case 'a':
        case 'A': ok = name(c, kDays) >= 0; break;
        case 'p': {  // AM or PM, any case
          const char a_or_p = c.i + 2 <= c.s.size() && lower(c.s[c.i + 1]) == 'm' ? lower(c.s[c.i]) : '\0';
          if ((ok = a_or_p == 'a' || a_or_p == 'p')) st.pm = a_or_p == 'p', c.i += 2;
          break;
        }
        case 'z': ok = offset(c, st) == Offset::Ok; break;
        case 'Z': {  // a zone name: read, and honoured only if it means UTC
          const size_t start = c.i;
          while (c.i < c.s.size() && letter(c.s[c.i])) ++c.i;
          const std::string_view zone = c.s.substr(start, c.i - start);
          if (zone == "UTC" || zone == "GMT" || zone == "UT" || zone == "Z") st.offset_s = 0;
          ok = !zone.empty();
          break;
        }
        case 's': {  // seconds since 1970: the other fields but the fraction do not count
          size_t n = 0;
          while (n < 12 && c.digit_at(n)) ++n;
          if ((ok = n > 0)) st.epoch_s = std::stoll(std::string(c.s.substr(c.i, n))), c.i += n;
          break;
        }
      }
      if (!ok) return false;
    }
    return true;
  }

  // The fields checked and made a time: leap second :60 = :59.999, the year
  // inferred when the stamp has none, the zone's offset when it has none.
  std::optional<int64_t> finish(Stamp st, int64_t now_ms) const {
    using namespace std::chrono;
    if (st.epoch_s) return *st.epoch_s * 1000 + st.ms;
    if (st.twelve_hour) st.hour = st.hour % 12 + (st.pm ? 12 : 0);
    if (st.hour > 23 || st.minute > 59 || st.second > 60) return {};
    if (st.second == 60) st.second = 59, st.ms = 999;
    auto in_year = [&](int y) -> std::optional<int64_t> {
      year_month_day date = year{y} / st.month / st.day;
      if (st.month == 0) {  // %j
        if (st.yday < 1 || st.yday > (year{y}.is_leap() ? 366 : 365)) return {};
        date = sys_days{year{y} / 1 / 1} + days{st.yday - 1};
      }
      if (!date.ok()) return {};
      const seconds local =
          sys_days{date}.time_since_epoch() + hours{st.hour} + minutes{st.minute} + seconds{st.second};
      return (local.count() - (st.offset_s ? *st.offset_s : zone_offset(local.count()))) * 1000 + st.ms;
    };
    if (st.year) return in_year(*st.year);
    if (year_ != 0) return in_year(year_);
    // The year of now in the zone, or the one before if that puts the stamp over a day ahead.
    const seconds now_s = floor<seconds>(milliseconds{now_ms});
    const seconds local_now = now_s + seconds{local_ ? offset_at_utc(now_s.count()) : offset_s_};
    const int y = static_cast<int>(year_month_day{floor<days>(sys_seconds{local_now})}.year());
    if (auto t = in_year(y); t && *t <= now_ms + 86'400'000) return t;
    return in_year(y - 1);
  }

  // The zone's offset for a local time; the local zone's is that of the start
  // of its quarter hour (match/logtime.h), as mktime() gives it, or the
  // first pass of a repeated one.
  int64_t zone_offset(int64_t local_s) const {
    using namespace std::chrono;
    if (!local_) return offset_s_;
    const sys_seconds quarter{floor<duration<int64_t, std::ratio<900>>>(seconds{local_s})};
    const sys_days midnight = floor<days>(quarter);
    const year_month_day date{midnight};
    struct tm tm {};
    tm.tm_year = static_cast<int>(date.year()) - 1900;
    tm.tm_mon = static_cast<int>(static_cast<unsigned>(date.month())) - 1;
    tm.tm_mday = static_cast<int>(static_cast<unsigned>(date.day()));
    const hh_mm_ss time_of_day{quarter - midnight};
    tm.tm_hour = static_cast<int>(time_of_day.hours().count());
    tm.tm_min = static_cast<int>(time_of_day.minutes().count());
    tm.tm_isdst = -1;
    const time_t t = mktime(&tm);
    const int64_t q = quarter.time_since_epoch().count();
    if (t == -1) return offset_at_utc(q);
    // A local time that occurs twice is its first pass: the larger of the
    // offsets whose reading is that local time.
    int64_t offset = q - t;
    for (const int64_t other_at : {static_cast<int64_t>(t) - 6 * 3600, static_cast<int64_t>(t) + 6 * 3600}) {
      const int64_t other = offset_at_utc(other_at);
      if (other > offset && offset_at_utc(q - other) == other) offset = other;
    }
    return offset;
  }

  static int64_t offset_at_utc(int64_t utc_s) {
    const time_t t = utc_s;
    struct tm tm {};
    return localtime_r(&t, &tm) ? tm.tm_gmtoff : 0;
  }

  Form form_;
  std::string format_;
  std::unique_ptr<RE2> match_;
  bool local_;
  int64_t offset_s_;
  int year_;
};

}  // namespace swthrottle::test
