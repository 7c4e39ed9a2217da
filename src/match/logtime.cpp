#include "match/logtime.h"

#include <re2/re2.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "match/stamp_bytes.h"
#include "match/stamp_forms.h"
#include "match/stamp_memo.h"

namespace swthrottle::match {

using namespace stamp;  // NOLINT: the parts of this facade

// RFC 3339 and CLF stamps carry their year: the value is the head's local
// time in seconds * 2, + 1 for a leap second (:60). Syslog stamps do not:
// the extra key is wall_now_ms, and the values are a leap second flag and
// the local times in the two years finish() may choose (kNoTime: no such day).
struct LogTime::Memos {
  HeadMemo<kRfc3339Head, 1> rfc3339;
  HeadMemo<kClfHead, 1> clf;
  HeadMemo<kSyslogHead, 3> syslog;
};

namespace {

bool is_named_form(std::string_view f) {
  return f == "auto" || f == "rfc3339" || f == "syslog" || f == "epoch" || f == "clf" || f == "ymd_slash" ||
         f == "iso_basic" || f == "json_epoch";
}

}  // namespace

LogTime::LogTime(const config::TimezoneSpec& tz, int year)
    : zone_(tz), year_(year), memos_(std::make_unique<Memos>()) {}

LogTime::LogTime(LogTime&&) noexcept = default;
LogTime& LogTime::operator=(LogTime&&) noexcept = default;
LogTime::~LogTime() = default;

LogTime::LogTime(const LogTime& other)
    : kind_(other.kind_),
      format_(other.format_),
      match_(other.match_),
      zone_(other.zone_),
      year_(other.year_),
      memos_(std::make_unique<Memos>()),
      field_(other.field_) {
  std::string ignored;
  compile_match(&ignored);  // cannot fail: the pattern compiled before
  if (!field_.empty()) json_ = std::make_unique<JsonFields>(std::span<const std::string>(&field_, 1));
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
  LogTime lt(tz, year);

  using Form = config::TimestampSpec::Form;
  Form form = spec.form;
  // `format = "syslog"` next to `match` names a form, not a strptime format.
  if (form == Form::Strptime && is_named_form(spec.format)) {
    form = spec.format == "rfc3339"      ? Form::Rfc3339
           : spec.format == "syslog"     ? Form::Syslog
           : spec.format == "epoch"      ? Form::Epoch
           : spec.format == "clf"        ? Form::Clf
           : spec.format == "ymd_slash"  ? Form::YmdSlash
           : spec.format == "iso_basic"  ? Form::IsoBasic
           : spec.format == "json_epoch" ? Form::JsonEpoch
                                         : Form::Auto;
  }
  switch (form) {
    case Form::Auto: lt.kind_ = Kind::Auto; break;
    case Form::Rfc3339: lt.kind_ = Kind::Rfc3339; break;
    case Form::Syslog: lt.kind_ = Kind::Syslog; break;
    case Form::Epoch: lt.kind_ = Kind::Epoch; break;
    case Form::Clf: lt.kind_ = Kind::Clf; break;
    case Form::Strptime: lt.kind_ = Kind::Strptime; break;
    case Form::YmdSlash: lt.kind_ = Kind::YmdSlash; break;
    case Form::IsoBasic: lt.kind_ = Kind::IsoBasic; break;
    case Form::JsonEpoch: lt.kind_ = Kind::JsonEpoch; break;
  }

  if (lt.kind_ == Kind::Strptime) {
    auto format = stamp::StrptimeFormat::compile(spec.format);
    if (!format) return format.error();
    lt.format_ = std::move(*format);
  }

  if (!spec.field.empty()) {
    // The field holds the stamp alone: RFC 3339 is the one text form read there.
    lt.kind_ = Kind::Rfc3339;
    lt.field_ = spec.field;
    lt.json_ = std::make_unique<JsonFields>(std::span<const std::string>(&lt.field_, 1));
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

int64_t LogTime::field_ms(std::string_view line, int64_t wall_now_ms) const {
  // A bad byte in another field (read leniently) hides no timestamp.
  if (const auto r = json_->read(line); r != JsonFields::Read::Json && r != JsonFields::Read::Repaired) return kNoTime;
  const std::optional<std::string_view> text = json_->text(0);
  if (!text) return kNoTime;
  return field_text_ms(*text, wall_now_ms);
}

// An epoch number (as a JSON number or a string of digits), by magnitude
// (another spelling of a number, with an exponent, is none); else a stamp in
// the text, searched as a line is.
int64_t LogTime::field_text_ms(std::string_view s, int64_t wall_now_ms) const {
  if (!s.empty() && stamp::is_digit(s[0]) && s.find_first_not_of("0123456789.eE+-") == std::string_view::npos)
    return stamp::epoch_by_magnitude(s);
  return search<false>(s, wall_now_ms);
}

int64_t LogTime::json_auto_ms(std::string_view line, int64_t wall_now_ms, int* which) const {
  // One parser per thread, for every LogTime: parse() stays safe to share.
  static const std::vector<std::string> kPaths(std::begin(kStampFields), std::end(kStampFields));
  thread_local JsonFields fields(kPaths);
  if (fields.read(line) == JsonFields::Read::Json) {
    for (std::size_t f = 0; f < kPaths.size(); ++f) {
      const std::optional<std::string_view> text = fields.text(f);
      if (!text) continue;
      if (const int64_t t = field_text_ms(*text, wall_now_ms); t != kNoTime) {
        if (which) *which = static_cast<int>(f);
        return t;
      }
    }
  }
  if (which) *which = -1;
  return search<true>(line, wall_now_ms);
}

std::string_view LogTime::stamp_field(std::string_view line, int64_t wall_now_ms) const {
  if (json_) return field_ms(line, wall_now_ms) == kNoTime ? std::string_view() : std::string_view(field_);
  if (re_ || kind_ != Kind::Auto || line.empty() || line[0] != '{') return {};
  int which = -1;
  json_auto_ms(line, wall_now_ms, &which);
  return which < 0 ? std::string_view() : kStampFields[which];
}

int64_t LogTime::parse_ms(std::string_view line, int64_t wall_now_ms) const {
  if (json_) return field_ms(line, wall_now_ms);
  std::string_view text = line;
  if (re_) {
    re2::StringPiece groups[2];
    if (!re_->Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::UNANCHORED, groups, 2) ||
        groups[1].data() == nullptr) {
      return kNoTime;
    }
    text = std::string_view(groups[1].data(), groups[1].size());
  }
  if (kind_ != Kind::Strptime) {
    // A JSON object gets a search of its own, so that other lines do not pay
    // for looking for epoch numbers in JSON fields.
    if (!text.empty() && text[0] == '{' && (kind_ == Kind::Auto || kind_ == Kind::JsonEpoch)) {
      // Auto on a whole line: its stamp fields first (a `match` group is text).
      if (kind_ == Kind::Auto && !re_) return json_auto_ms(text, wall_now_ms);
      return search<true>(text, wall_now_ms);
    }
    return search<false>(text, wall_now_ms);
  }
  Fields f;
  if (!format_.read(text, f)) return kNoTime;
  return finish(f, wall_now_ms);
}

// Leftmost first. Only the bytes that can start a stamp are looked at: the
// first digit of a run (RFC 3339 needs exactly four, then '-'), the first
// letter of a word (syslog needs a three-letter month), and '['.
//
// The token at the start of the line is tried first, as most stamps are
// there. Past it the scan skips to kMaxLead bytes before the first "dd:dd"
// (see first_clock): a stamp that starts further left would have its HH:MM
// further left. The scan must resume where the full scan would be, on the
// first byte of a token, so it backs up over a run of digits or letters it
// lands in; every token it passes over that way starts too early to be a stamp.
//
// Aligned to a cache line: where the linker happened to put it decided up to
// 8 % of the time of a line without a stamp (BM_LogTimeStackTrace).
template <bool kJson>
[[gnu::aligned(64)]] int64_t LogTime::search(std::string_view s, int64_t wall_now_ms) const {
  const bool any = kind_ == Kind::Auto;
  const std::size_t n = s.size();
  // The commonest line of all: the same RFC 3339 head at the start as the
  // line before. Its '-' at s[4] rules out epoch, and the scan would start
  // with it. If what follows the head does not make a stamp, the scan below
  // looks at it again, in its turn. "YYYY/MM/DD HH:MM:SS" heads share the
  // memo ('-' | 2 == '/', and no other byte | 2 is): it holds only heads of
  // the forms this LogTime reads, each compared in full.
  if ((any || kind_ == Kind::Rfc3339 || kind_ == Kind::YmdSlash) && n >= kRfc3339Head && (s[4] | 2) == '/') {
    if (int64_t head[1]; memos_->rfc3339.find(s.data(), 0, head)) {
      if (const int64_t t = rfc3339_after_head(s, 0, head[0]); t != kNoTime) return t;
    }
  }
  const bool basic = any || kind_ == Kind::IsoBasic;
  if (any || kind_ == Kind::Epoch || basic) {
    // Epoch needs ten digits or more, basic ISO 8601 eight and a 'T': most
    // lines are turned away by the first eight.
    static constexpr Pattern8 kDigits = pattern8("dddddddd");
    if (n >= 10 && mismatch(s.data(), kDigits) == 0) {
      if (s[8] == 'T') {
        if (basic) {
          if (const int64_t t = iso_basic_time(s, 0); t != kNoTime || !any) return t;
        }
      } else if (kind_ != Kind::IsoBasic) {
        if (const int64_t t = epoch_at_start(s); t != kNoTime) return t;
      }
    }
    if (!any) return kNoTime;
  }
  const bool rfc = any || kind_ == Kind::Rfc3339;
  const bool syslog = any || kind_ == Kind::Syslog;
  const bool clf = any || kind_ == Kind::Clf;
  const bool slash = any || kind_ == Kind::YmdSlash;
  bool skipped = false;
  std::size_t i = 0;
  while (i < n) {
    switch (kByteClass[static_cast<unsigned char>(s[i])]) {
      case kNothing: ++i; break;
      case kDigit: {
        std::size_t j = i + 1;
        while (j < n && is_digit(s[j])) ++j;
        const std::size_t len = j - i;
        if (len == 4 && j < n) {
          if (rfc && s[j] == '-') {
            if (const int64_t t = rfc3339_time<false>(s, i); t != kNoTime) return t;
          } else if (slash && s[j] == '/') {
            if (const int64_t t = rfc3339_time<true>(s, i); t != kNoTime) return t;
          }
        } else if (kJson && len >= 10) {
          if (const int64_t t = json_epoch_at(s, i, j); t != kNoTime) return t;
        }
        i = j;
        break;
      }
      case kLetter: {
        std::size_t j = i + 1;
        while (j < n && is_alpha(s[j])) ++j;
        if (syslog && j - i == 3) {
          if (const int64_t t = syslog_time(s, i, wall_now_ms); t != kNoTime) return t;
        }
        i = j;
        break;
      }
      case kBracket: {
        if (clf) {
          if (const int64_t t = clf_time(s, i); t != kNoTime) return t;
        }
        ++i;
        break;
      }
    }
    if (!skipped) {
      skipped = true;
      const std::size_t clock = first_clock<kJson>(s);
      if (clock == kNpos) return kNoTime;
      std::size_t start = clock > kMaxLead ? clock - kMaxLead : 0;
      const uint8_t cls = kByteClass[static_cast<unsigned char>(s[start])];
      if (cls == kDigit || cls == kLetter) {
        while (start > 0 && kByteClass[static_cast<unsigned char>(s[start - 1])] == cls) --start;
      }
      if (start > i) i = start;
    }
  }
  return kNoTime;
}

// One candidate each, out of line: inlined into the scan, they crowded its
// registers and slowed the lines without a stamp. Each first asks its memo
// whether the head is the last one seen (then only what follows the head is
// read, as always), else parses and validates it all and stores the head.

template <bool kSlash>
int64_t LogTime::rfc3339_time(std::string_view s, std::size_t i) const {
  int64_t head[1];
  if (s.size() - i >= kRfc3339Head && memos_->rfc3339.find(s.data() + i, 0, head)) {
    return rfc3339_after_head(s, i, head[0]);
  }
  Fields f;
  if (!rfc3339_at<kSlash>(s, i, f)) return kNoTime;
  // Without seconds the head is shorter than the memo's.
  return remember(f, s.size() - i > 16 && s[i + 16] == ':' ? &memos_->rfc3339 : nullptr, s.data() + i);
}

// The RFC 3339 stamp at s[i] whose head the memo gave.
[[gnu::always_inline]] inline int64_t LogTime::rfc3339_after_head(std::string_view s, std::size_t i,
                                                                  int64_t head) const {
  Fields f;
  if (!rfc3339_end(s, optional_fraction(s, i + kRfc3339Head, f), f)) return kNoTime;
  return from_head(head, f);
}

// No memo: these stamps are rarer, and their heads are not the memo's.
int64_t LogTime::iso_basic_time(std::string_view s, std::size_t i) const {
  Fields f;
  if (!iso_basic_at(s, i, f)) return kNoTime;
  return remember(f, static_cast<HeadMemo<kRfc3339Head, 1>*>(nullptr), s.data() + i);
}

int64_t LogTime::clf_time(std::string_view s, std::size_t i) const {
  int64_t head[1];
  if (s.size() - i >= kClfHead && memos_->clf.find(s.data() + i, 0, head)) {
    Fields f;
    if (!clf_end(s, i + kClfHead, f)) return kNoTime;
    return from_head(head[0], f);
  }
  Fields f;
  if (!clf_at(s, i, f)) return kNoTime;
  return remember(f, &memos_->clf, s.data() + i);
}

// finish() for a stamp with its year, storing its head in memo (if any).
template <typename Memo>
int64_t LogTime::remember(Fields& f, Memo* memo, const char* head) const {
  const bool leap = f.second == 60;
  if (!settle_time(f)) return kNoTime;
  const int64_t local_s = local_seconds(f, f.year);
  if (local_s == kNoTime) return kNoTime;
  if (memo != nullptr) memo->store(head, 0, {local_s * 2 + leap});
  return utc_ms(local_s, f);
}

// A head from the memo and the rest of its stamp in f.
int64_t LogTime::from_head(int64_t head, Fields& f) const {
  if ((head & 1) != 0) f.ms = 999;
  return utc_ms(head >> 1, f);
}

int64_t LogTime::syslog_time(std::string_view s, std::size_t i, int64_t wall_now_ms) const {
  // With settings.year, now does not matter.
  const int64_t now_key = year_ != 0 ? 0 : wall_now_ms;
  int64_t memo[3];
  if (s.size() - i >= kSyslogHead && memos_->syslog.find(s.data() + i, now_key, memo)) {
    Fields f;
    if (!syslog_end(s, i + kSyslogHead, f)) return kNoTime;
    // A year in the line ("Dec 04 04:47:44 2005") is left to the slow path.
    if (f.year == kUnset) {
      if (memo[0] != 0) f.ms = 999;
      return syslog_year(memo, f, wall_now_ms);
    }
  }
  Fields f;
  if (!syslog_at(s, i, f)) return kNoTime;
  // The head is "Mon dd HH:MM:SS" or "Mon  d HH:MM:SS"; "Mon d HH:MM:SS" is shorter.
  if (f.year != kUnset || (s[i + 4] != ' ' && !is_digit(s[i + 5]))) return finish(f, wall_now_ms);
  // finish(), keeping the local times for the memo.
  const bool leap = f.second == 60;
  if (!settle_time(f)) return kNoTime;
  const int y = year_ != 0 ? year_ : zone_.year_at(wall_now_ms);
  const int64_t stored[3] = {leap, local_seconds(f, y), year_ != 0 ? kNoTime : local_seconds(f, y - 1)};
  memos_->syslog.store(s.data() + i, now_key, stored);
  return syslog_year(stored, f, wall_now_ms);
}

// finish()'s choice of the year for a syslog stamp, from the local times in
// the year it takes first and the year before.
int64_t LogTime::syslog_year(const int64_t (&local_s)[3], const Fields& f, int64_t wall_now_ms) const {
  if (local_s[1] != kNoTime) {
    const int64_t t = utc_ms(local_s[1], f);
    if (year_ != 0 || t <= wall_now_ms + kDayMs) return t;
  } else if (year_ != 0) {
    return kNoTime;
  }
  return local_s[2] == kNoTime ? kNoTime : utc_ms(local_s[2], f);
}

// Validates the fields and fills in what the stamp does not say: the year
// (DESIGN.md §4) and the zone.
[[gnu::always_inline]] inline int64_t LogTime::finish(Fields& f, int64_t wall_now_ms) const {
  if (f.has_epoch) return f.epoch_s * 1000 + f.ms;
  if (!settle_time(f)) return kNoTime;
  if (f.year != kUnset) return to_utc_ms(f, f.year);
  if (year_ != 0) return to_utc_ms(f, year_);
  const int y = zone_.year_at(wall_now_ms);
  if (const int64_t t = to_utc_ms(f, y); t != kNoTime && t <= wall_now_ms + kDayMs) return t;
  return to_utc_ms(f, y - 1);
}

[[gnu::always_inline]] inline int64_t LogTime::to_utc_ms(const Fields& f, int year) const {
  const int64_t local_s = local_seconds(f, year);
  if (local_s == kNoTime) return kNoTime;
  return utc_ms(local_s, f);
}

// The local time of a stamp in the configured zone (or its own offset).
[[gnu::always_inline]] inline int64_t LogTime::utc_ms(int64_t local_s, const Fields& f) const {
  const int64_t offset_s = f.has_offset ? f.offset_s : zone_.offset_of_local(local_s);
  return (local_s - offset_s) * 1000 + f.ms;
}

}  // namespace swthrottle::match
