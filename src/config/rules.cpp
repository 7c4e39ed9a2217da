// The rules file loader (SPEC §1, §7).
//
// Loading is two passes. FileParser::parse() turns one file's TOML into the settings
// that file gives explicitly plus "pending" rules whose defaults are not yet
// applied; finish_rule() applies the (merged) settings and checks what depends
// on them (window vs buckets) and computes the fingerprint. The split exists
// because a rule in b.toml takes its defaults from a [settings] in a.toml.
//
// Positions: toml++ reports 1-based lines and columns counted in code points.
// Sub-parsers (duration, expr, template, RE2 checks) report a 1-based byte
// offset inside the decoded string value; in_string() maps that back into
// the file, undoing escapes of basic strings.
#include "config/rules.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <utility>

#include <fmt/format.h>
#include <re2/re2.h>
#include <toml++/toml.h>

#include "config/duration.h"
#include "util/suggest.h"
#include "util/utf8.h"

namespace swthrottle::config {
namespace {

constexpr int64_t kMaxBuckets = 3600;
constexpr std::size_t kMaxEvents = 64;

const std::vector<std::string> kTopKeys{"settings", "rule"};
const std::vector<std::string> kSettingsKeys{"mode",     "buckets", "time",    "timestamp",
                                             "timezone", "year",    "max_keys"};
const std::vector<std::string> kRuleKeys{"name",    "kind",     "threshold", "window", "when",
                                         "key",     "message",  "cooldown",  "resolve", "exec",
                                         "ignore",  "mode",     "buckets",   "max_keys", "event"};
const std::vector<std::string> kEventKeys{"name", "match"};
const std::vector<std::string> kTimestampKeys{"match", "format"};
const std::vector<std::string> kModes{"efficient", "accurate"};
const std::vector<std::string> kKinds{"alert", "throttle"};
const std::vector<std::string> kTimes{"arrival", "log"};
const std::vector<std::string> kForms{"auto", "rfc3339", "syslog", "epoch", "clf"};
const std::vector<std::string> kWhenKeywords{"and", "or", "not"};
// Indexed by Field: the template names of the built-in fields.
const std::vector<std::string> kBuiltinFields{"rule",   "event", "count", "threshold",
                                              "window", "key",   "line",  "suppressed"};
static_assert(kFieldFirstCapture == 8, "kBuiltinFields must list every built-in Field");

struct Pos {
  int line = 0;
  int col = 0;
};

Pos pos_of(const toml::source_region& r) {
  return {static_cast<int>(r.begin.line), static_cast<int>(r.begin.column)};
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

// A value as a user would recognise it in "must be ..., not X".
std::string describe(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return quote(n.as_string()->get());
    case toml::node_type::integer: return std::to_string(n.as_integer()->get());
    case toml::node_type::floating_point: return fmt::format("{}", n.as_floating_point()->get());
    case toml::node_type::boolean: return n.as_boolean()->get() ? "true" : "false";
    case toml::node_type::array: return n.as_array()->empty() ? "an empty array" : "an array";
    case toml::node_type::table: return "a table";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

// `"a" or "b"`, `"a", "b" or "c"`.
std::string quoted_choices(const std::vector<std::string>& choices) {
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) out += (i + 1 == choices.size()) ? " or " : ", ";
    out += quote(choices[i]);
  }
  return out;
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += sep;
    out += v[i];
  }
  return out;
}

bool is_rule_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
  });
}

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

std::string_view mode_name(Mode m) { return m == Mode::Accurate ? "accurate" : "efficient"; }

// Bucket counts that would fit `window_ms`, for the error message: the
// nearest divisor below the asked count and the two nearest above it (more
// buckets means finer expiry, so those are the likelier wish), filled up from
// the other side when one side has too few.
std::vector<int64_t> near_divisors(int64_t window_ms, int64_t asked) {
  std::vector<int64_t> below, above;
  for (int64_t b = std::min(asked - 1, kMaxBuckets); b >= 1 && below.size() < 3; --b) {
    if (window_ms % b == 0) below.push_back(b);
  }
  for (int64_t b = asked + 1; b <= kMaxBuckets && above.size() < 3; ++b) {
    if (window_ms % b == 0) above.push_back(b);
  }
  std::size_t take_below = std::min<std::size_t>(1, below.size());
  std::size_t take_above = std::min<std::size_t>(3 - take_below, above.size());
  take_below = std::min<std::size_t>(3 - take_above, below.size());
  std::vector<int64_t> out(below.begin(), below.begin() + static_cast<std::ptrdiff_t>(take_below));
  out.insert(out.end(), above.begin(), above.begin() + static_cast<std::ptrdiff_t>(take_above));
  std::sort(out.begin(), out.end());
  return out;
}

// `when` text with whitespace normalised, so that "a>5" and "a > 5" give one
// fingerprint: runs of name/number characters and runs of comparison
// characters are tokens; everything else is a one-character token.
std::string canonical_when(std::string_view s) {
  auto word = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.';
  };
  auto cmp = [](char c) { return c == '<' || c == '>' || c == '=' || c == '!'; };
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    if (word(c)) {
      while (j < s.size() && word(s[j])) ++j;
    } else if (cmp(c)) {
      while (j < s.size() && cmp(s[j])) ++j;
    }
    if (!out.empty()) out += ' ';
    out.append(s.substr(i, j - i));
    i = j;
  }
  return out;
}

void add_field(std::string& out, std::string_view name, std::string_view value) {
  out += fmt::format("{}={}:{};", name, value.size(), value);
}

std::string make_fingerprint(const Rule& r) {
  std::string fp;
  add_field(fp, "kind", r.kind == RuleKind::Alert ? "alert" : "throttle");
  add_field(fp, "events", std::to_string(r.events.size()));
  for (const auto& e : r.events) {
    add_field(fp, "event", e.name);
    add_field(fp, "match", e.match);
  }
  add_field(fp, "ignore", r.ignore);
  add_field(fp, "window_ms", std::to_string(r.window_ms));
  add_field(fp, "buckets", std::to_string(r.buckets));
  add_field(fp, "mode", mode_name(r.mode));
  add_field(fp, "when",
            r.threshold ? fmt::format("sum >= {}", *r.threshold) : canonical_when(r.when_text));
  return fp;
}

// ---- RE2 syntax RE2 does not have ----------------------------------------

enum class RegexUse { Event, Ignore, Timestamp };

struct Unsupported {
  std::size_t offset = 0;  // 0-based byte offset in the pattern
  std::string message;
};

// Perl/PCRE constructs that RE2 rejects, found before RE2 sees the pattern so
// that the message can say why (RE2's own "invalid perl operator: (?=" does
// not) and what to write instead.
std::optional<Unsupported> find_unsupported(std::string_view p, RegexUse use) {
  const std::string negative_advice =
      use == RegexUse::Event ? "list what must not count in the rule's ignore pattern instead"
                             : "match what must be there instead of excluding what must not";
  auto unsupported = [](std::size_t at, std::string_view what, std::string_view token,
                        std::string_view advice) {
    return Unsupported{at, fmt::format("pattern uses {} \"{}\", which RE2 does not support "
                                       "(RE2 guarantees linear time); {}",
                                       what, token, advice)};
  };
  const std::string possessive_advice = "RE2 never backtracks, so the plain quantifier does the same";
  bool in_class = false;
  std::size_t i = 0;
  while (i < p.size()) {
    char c = p[i];
    if (c == '\\') {
      if (i + 1 >= p.size()) break;
      char d = p[i + 1];
      if (d == 'Q') {  // \Q...\E is literal text
        std::size_t end = p.find("\\E", i + 2);
        i = end == std::string_view::npos ? p.size() : end + 2;
        continue;
      }
      if (!in_class && d >= '1' && d <= '9') {
        return unsupported(i, "a backreference", p.substr(i, 2),
                           "repeat the group's pattern instead of referring back to it");
      }
      if (!in_class && d == 'k' && i + 2 < p.size() &&
          (p[i + 2] == '<' || p[i + 2] == '{' || p[i + 2] == '\'')) {
        return unsupported(i, "a backreference", p.substr(i, 3),
                           "repeat the group's pattern instead of referring back to it");
      }
      i += 2;
      continue;
    }
    if (in_class) {
      if (c == '[' && i + 1 < p.size() && p[i + 1] == ':') {  // [:alpha:]
        std::size_t end = p.find(":]", i + 2);
        i = end == std::string_view::npos ? p.size() : end + 2;
        continue;
      }
      if (c == ']') in_class = false;
      ++i;
      continue;
    }
    if (c == '[') {
      in_class = true;
      ++i;
      if (i < p.size() && p[i] == '^') ++i;
      if (i < p.size() && p[i] == ']') ++i;  // a leading ']' is literal
      continue;
    }
    if (c == '(' && i + 1 < p.size() && p[i + 1] == '?') {
      std::string_view rest = p.substr(i + 2);
      if (rest.starts_with("=")) {
        return unsupported(i, "a lookahead", "(?=", "match the text that follows as part of the pattern");
      }
      if (rest.starts_with("!")) return unsupported(i, "a negative lookahead", "(?!", negative_advice);
      if (rest.starts_with("<=")) {
        return unsupported(i, "a lookbehind", "(?<=", "match the text before as part of the pattern");
      }
      if (rest.starts_with("<!")) return unsupported(i, "a negative lookbehind", "(?<!", negative_advice);
      if (rest.starts_with(">")) {
        return unsupported(i, "an atomic group", "(?>",
                           "use a plain group \"(?:\"; RE2 never backtracks, so it does the same");
      }
      if (rest.starts_with("<") && rest.size() > 1 && is_identifier(rest.substr(1, 1))) {
        std::size_t close = rest.find('>');
        std::string name(rest.substr(1, close == std::string_view::npos ? 0 : close - 1));
        return Unsupported{i, fmt::format("RE2 writes a named group as \"(?P<{0}>\", not \"(?<{0}>\"", name)};
      }
      i += 2;  // "(?" is not a quantifier
      continue;
    }
    std::size_t quant_end = 0;  // one past a quantifier starting at i, or 0
    if (c == '*' || c == '+' || c == '?') {
      quant_end = i + 1;
    } else if (c == '{') {
      // {n}, {n,}, {n,m}; anything else is a literal brace in RE2
      std::size_t j = i + 1;
      std::size_t digits = 0;
      while (j < p.size() && p[j] >= '0' && p[j] <= '9') ++j, ++digits;
      if (digits > 0 && j < p.size() && p[j] == ',') {
        ++j;
        while (j < p.size() && p[j] >= '0' && p[j] <= '9') ++j;
      }
      if (digits > 0 && j < p.size() && p[j] == '}') quant_end = j + 1;
    }
    if (quant_end > 0) {
      if (quant_end < p.size() && p[quant_end] == '+') {
        return unsupported(i, "a possessive quantifier", p.substr(i, quant_end + 1 - i),
                           fmt::format("write \"{}\"; {}", p.substr(i, quant_end - i), possessive_advice));
      }
      i = quant_end;
      continue;
    }
    ++i;
  }
  return std::nullopt;
}

// ---- one file --------------------------------------------------------------

struct GivenSetting {
  std::string canon;  // compared across files
  std::string shown;  // as written, for messages
  Pos pos;
};

struct PendingRule {
  Rule rule;
  Pos name_pos;
  Pos window_pos;  // the value the window came from (threshold or window)
  std::optional<uint32_t> buckets;
  Pos buckets_pos;
  std::optional<Mode> mode;
  std::optional<uint64_t> max_keys;
  bool cooldown_set = false;
};

struct ParsedFile {
  std::string file;
  Settings settings;
  std::map<std::string, GivenSetting> given;  // the settings this file sets
  std::vector<PendingRule> rules;
};

using MaybeError = std::optional<Error>;

class FileParser {
 public:
  FileParser(std::string_view text, std::string_view file) : text_(text), file_(file) {
    std::size_t start = 0;
    while (start <= text_.size()) {
      std::size_t nl = text_.find('\n', start);
      if (nl == std::string_view::npos) {
        lines_.push_back(text_.substr(start));
        break;
      }
      lines_.push_back(text_.substr(start, nl - start));
      start = nl + 1;
    }
  }

  Result<ParsedFile> parse();

 private:
  Error err(Pos p, std::string what) const { return Error{file_, p.line, p.col, std::move(what)}; }
  Error err(const toml::node& n, std::string what) const { return err(pos_of(n.source()), std::move(what)); }
  Error err(const toml::key& k, std::string what) const { return err(pos_of(k.source()), std::move(what)); }
  Error err_in(const toml::node& n, int col, std::string what) const {
    return err(in_string(n, col), std::move(what));
  }

  Pos in_string(const toml::node& n, int col) const;

  MaybeError unknown_keys(const toml::table& t, const std::vector<std::string>& allowed,
                          std::string_view where) const;
  Result<int> choose(const toml::node& v, std::string_view key, const std::vector<std::string>& choices) const;
  Result<int64_t> integer(const toml::node& v, std::string_view key, int64_t lo, int64_t hi) const;
  Result<std::unique_ptr<RE2>> regex(const toml::node& v, RegexUse use) const;
  Result<TimestampSpec::Form> timestamp_form(const toml::node& v, std::string_view key, bool table_allowed,
                                             std::string& format) const;
  Result<TimestampSpec> timestamp(const toml::node& v) const;
  Result<TimezoneSpec> timezone(const toml::node& v) const;
  MaybeError parse_settings(const toml::table& t, ParsedFile& out) const;
  MaybeError parse_rule(const toml::table& t, std::size_t index, PendingRule& out) const;
  MaybeError parse_events(const toml::node* events_node, const toml::table& rule_table, const std::string& label,
                          Rule& rule) const;
  Result<Template> parse_template(const toml::node& v, std::string_view key,
                                  const std::vector<std::string>& known, const std::vector<int>& ids) const;
  Result<int64_t> duration(const toml::node& v, std::string_view key) const;

  std::string_view text_;
  std::string file_;
  std::vector<std::string_view> lines_;
};

// The table's entries in file order (toml++ iterates them sorted by name).
std::vector<std::pair<const toml::key*, const toml::node*>> ordered(const toml::table& t) {
  std::vector<std::pair<const toml::key*, const toml::node*>> v;
  for (auto&& [k, n] : t) v.emplace_back(&k, &n);
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    auto pa = a.first->source().begin;
    auto pb = b.first->source().begin;
    return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
  });
  return v;
}

std::size_t byte_of_column(std::string_view line, int col) {
  std::size_t b = 0;
  for (int c = 1; c < col && b < line.size(); ++c) {
    ++b;
    while (b < line.size() && is_utf8_continuation(static_cast<unsigned char>(line[b]))) ++b;
  }
  return b;
}

int code_points(std::string_view s) {
  return static_cast<int>(
      std::count_if(s.begin(), s.end(), [](char c) { return !is_utf8_continuation(static_cast<unsigned char>(c)); }));
}

std::size_t utf8_length(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

Pos FileParser::in_string(const toml::node& n, int col) const {
  Pos p = pos_of(n.source());
  if (col <= 0 || p.line <= 0 || static_cast<std::size_t>(p.line) > lines_.size()) return p;
  std::string_view line = lines_[static_cast<std::size_t>(p.line) - 1];
  std::size_t open = byte_of_column(line, p.col);
  if (open >= line.size()) return p;
  char q = line[open];
  // Multi-line strings: the offset would need line breaks counted; point at the value.
  if ((q != '"' && q != '\'') || line.substr(open, 3) == "\"\"\"" || line.substr(open, 3) == "'''") return p;
  std::size_t src = open + 1;
  auto want = static_cast<std::size_t>(col - 1);  // decoded bytes before the offset
  if (q == '\'') {
    src = std::min(line.size(), src + want);
  } else {
    while (want > 0 && src < line.size() && line[src] != '"') {
      if (line[src] == '\\' && src + 1 < line.size()) {
        char e = line[src + 1];
        std::size_t hex = e == 'u' ? 4 : e == 'U' ? 8 : 0;
        if (hex > 0 && src + 2 + hex <= line.size()) {
          uint32_t cp = 0;
          for (std::size_t k = 0; k < hex; ++k) {
            char h = line[src + 2 + k];
            cp = cp * 16 + static_cast<uint32_t>(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
          }
          want -= std::min(want, utf8_length(cp));
          src += 2 + hex;
        } else {
          want -= 1;
          src += 2;
        }
      } else {
        want -= 1;
        src += 1;
      }
    }
  }
  return {p.line, p.col + 1 + code_points(line.substr(open + 1, src - (open + 1)))};
}

MaybeError FileParser::unknown_keys(const toml::table& t, const std::vector<std::string>& allowed,
                                    std::string_view where) const {
  for (auto [k, n] : ordered(t)) {
    if (std::find(allowed.begin(), allowed.end(), k->str()) == allowed.end()) {
      return err(*k, fmt::format("unknown key {} in {}{}", quote(k->str()), where, did_you_mean(k->str(), allowed)));
    }
  }
  return std::nullopt;
}

Result<int> FileParser::choose(const toml::node& v, std::string_view key,
                               const std::vector<std::string>& choices) const {
  std::string expected = fmt::format("{} must be {}, not {}", key, quoted_choices(choices), describe(v));
  const auto* s = v.as_string();
  if (s == nullptr) return err(v, expected);
  auto it = std::find(choices.begin(), choices.end(), s->get());
  if (it == choices.end()) return err(v, expected + did_you_mean(s->get(), choices));
  return static_cast<int>(it - choices.begin());
}

Result<int64_t> FileParser::integer(const toml::node& v, std::string_view key, int64_t lo, int64_t hi) const {
  const auto* i = v.as_integer();
  if (i == nullptr || i->get() < lo || i->get() > hi) {
    if (hi == INT64_MAX) return err(v, fmt::format("{} must be an integer >= {}, not {}", key, lo, describe(v)));
    return err(v, fmt::format("{} must be an integer from {} to {}, not {}", key, lo, hi, describe(v)));
  }
  return i->get();
}

Result<std::unique_ptr<RE2>> FileParser::regex(const toml::node& v, RegexUse use) const {
  const std::string& pattern = v.as_string()->get();
  if (auto u = find_unsupported(pattern, use)) return err_in(v, static_cast<int>(u->offset) + 1, u->message);
  RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_unique<RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) {
    std::size_t at = re->error_arg().empty() ? std::string::npos : pattern.find(re->error_arg());
    int col = at == std::string::npos ? 0 : static_cast<int>(at) + 1;
    return err_in(v, col, fmt::format("invalid regex '{}': {}", pattern, re->error()));
  }
  return re;
}

Result<int64_t> FileParser::duration(const toml::node& v, std::string_view key) const {
  const auto* s = v.as_string();
  if (s == nullptr) {
    return err(v, fmt::format("{} must be a duration such as \"30s\", \"5m\" or \"1h30m\", not {}", key, describe(v)));
  }
  auto d = parse_duration(s->get());
  if (!d) return err_in(v, d.error().col, d.error().what);
  return *d;
}

// A timestamp form name, or a strptime format (anything with a '%').
Result<TimestampSpec::Form> FileParser::timestamp_form(const toml::node& v, std::string_view key,
                                                       bool table_allowed, std::string& format) const {
  std::vector<std::string> forms;
  for (const auto& f : kForms) forms.push_back(quote(f));
  std::string expected = fmt::format("{} must be {}, a strptime format (containing %){}, not {}", key,
                                     join(forms, ", "),
                                     table_allowed ? " or a table { match = 'REGEX', format = \"...\" }" : "",
                                     describe(v));
  const auto* s = v.as_string();
  if (s == nullptr) return err(v, expected);
  const std::string& text = s->get();
  if (text.find('%') != std::string::npos) {
    format = text;
    return TimestampSpec::Form::Strptime;
  }
  static const TimestampSpec::Form kFormValues[] = {TimestampSpec::Form::Auto, TimestampSpec::Form::Rfc3339,
                                                   TimestampSpec::Form::Syslog, TimestampSpec::Form::Epoch,
                                                   TimestampSpec::Form::Clf};
  for (std::size_t i = 0; i < kForms.size(); ++i) {
    if (text == kForms[i]) return kFormValues[i];
  }
  return err(v, expected + did_you_mean(text, kForms));
}

Result<TimestampSpec> FileParser::timestamp(const toml::node& v) const {
  TimestampSpec spec;
  if (const auto* t = v.as_table()) {
    if (auto e = unknown_keys(*t, kTimestampKeys, "settings.timestamp")) return *e;
    const toml::node* match = t->get("match");
    if (match == nullptr) {
      return err(v, "settings.timestamp has no match; give match = 'REGEX' whose first capture group holds "
                    "the timestamp");
    }
    if (!match->is_string()) {
      return err(*match, fmt::format("timestamp match must be a string (an RE2 pattern), not {}", describe(*match)));
    }
    auto re = regex(*match, RegexUse::Timestamp);
    if (!re) return std::move(re.error());
    spec.match = match->as_string()->get();
    if ((*re)->NumberOfCapturingGroups() < 1) {
      return err(*match, fmt::format("timestamp match '{}' has no capture group; put the timestamp in the "
                                     "first group, e.g. '^\\[([^\\]]+)\\]'",
                                     spec.match));
    }
    std::string format_text = "auto";
    if (const toml::node* format = t->get("format")) {
      auto form = timestamp_form(*format, "timestamp format", false, spec.format);
      if (!form) return std::move(form.error());
      spec.form = *form;
      format_text = format->as_string()->get();
    }
    spec.text = fmt::format("{{ match = '{}', format = {} }}", spec.match, quote(format_text));
    return spec;
  }
  auto form = timestamp_form(v, "timestamp", true, spec.format);
  if (!form) return std::move(form.error());
  spec.form = *form;
  spec.text = v.as_string()->get();
  return spec;
}

// "local", "UTC" (or "Z"), "+02:00", "-0530", "+02".
Result<TimezoneSpec> FileParser::timezone(const toml::node& v) const {
  std::string expected =
      fmt::format("timezone must be \"local\", \"UTC\" or an offset such as \"+02:00\" or \"-0530\", not {}",
                  describe(v));
  const auto* s = v.as_string();
  if (s == nullptr) return err(v, expected);
  const std::string& text = s->get();
  TimezoneSpec tz;
  tz.text = text;
  if (text == "local") return tz;
  tz.local = false;
  std::string lower = text;
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (lower == "utc" || lower == "z") return tz;
  auto digit = [&](std::size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  auto two = [&](std::size_t i) { return (text[i] - '0') * 10 + (text[i + 1] - '0'); };
  if (text.size() >= 3 && (text[0] == '+' || text[0] == '-') && digit(1) && digit(2)) {
    int hours = two(1);
    int minutes = -1;
    if (text.size() == 3) {
      minutes = 0;
    } else if (text.size() == 5 && digit(3) && digit(4)) {
      minutes = two(3);
    } else if (text.size() == 6 && text[3] == ':' && digit(4) && digit(5)) {
      minutes = two(4);
    }
    if (minutes >= 0 && minutes < 60 && hours < 24) {
      tz.offset_minutes = (text[0] == '-' ? -1 : 1) * (hours * 60 + minutes);
      return tz;
    }
  }
  return err(v, expected);
}

MaybeError FileParser::parse_settings(const toml::table& t, ParsedFile& out) const {
  if (auto e = unknown_keys(t, kSettingsKeys, "[settings]")) return e;
  Settings& s = out.settings;
  for (auto [k, v] : ordered(t)) {
    const std::string key(k->str());
    GivenSetting given{"", describe(*v), pos_of(v->source())};
    if (key == "mode") {
      auto m = choose(*v, "mode", kModes);
      if (!m) return m.error();
      s.mode = *m == 1 ? Mode::Accurate : Mode::Efficient;
      given.canon = kModes[static_cast<std::size_t>(*m)];
    } else if (key == "buckets") {
      auto b = integer(*v, "buckets", 1, kMaxBuckets);
      if (!b) return b.error();
      s.buckets = static_cast<uint32_t>(*b);
      given.canon = std::to_string(*b);
    } else if (key == "time") {
      auto m = choose(*v, "time", kTimes);
      if (!m) return m.error();
      s.time = *m == 1 ? TimeSource::Log : TimeSource::Arrival;
      given.canon = kTimes[static_cast<std::size_t>(*m)];
    } else if (key == "timestamp") {
      auto ts = timestamp(*v);
      if (!ts) return ts.error();
      s.timestamp = std::move(*ts);
      // Kept so that errors found later (the strptime format, by LogTime) point here.
      const Pos at = pos_of(v->source());
      s.timestamp.file = file_;
      s.timestamp.line = at.line;
      s.timestamp.col = at.col;
      given.canon = fmt::format("{}|{}|{}", static_cast<int>(s.timestamp.form), s.timestamp.format, s.timestamp.match);
      given.shown = v->is_table() ? s.timestamp.text : describe(*v);
    } else if (key == "timezone") {
      auto tz = timezone(*v);
      if (!tz) return tz.error();
      s.timezone = std::move(*tz);
      given.canon = s.timezone.local ? "local" : std::to_string(s.timezone.offset_minutes);
    } else if (key == "year") {
      auto y = integer(*v, "year", 1970, 9999);
      if (!y) return y.error();
      s.year = static_cast<int>(*y);
      given.canon = std::to_string(*y);
    } else if (key == "max_keys") {
      auto m = integer(*v, "max_keys", 1, INT64_MAX);
      if (!m) return m.error();
      s.max_keys = static_cast<uint64_t>(*m);
      given.canon = std::to_string(*m);
    }
    out.given[key] = std::move(given);
  }
  return std::nullopt;
}

Result<Template> FileParser::parse_template(const toml::node& v, std::string_view key,
                                            const std::vector<std::string>& known,
                                            const std::vector<int>& ids) const {
  const auto* s = v.as_string();
  if (s == nullptr) {
    return err(v, fmt::format("{} must be a string (a template such as \"{{ip}}\"), not {}", key, describe(v)));
  }
  auto resolve = [&](std::string_view name) -> int {
    auto it = std::find(known.begin(), known.end(), name);
    return it == known.end() ? -1 : ids[static_cast<std::size_t>(it - known.begin())];
  };
  auto t = Template::parse(s->get(), resolve, known);
  if (!t) return err_in(v, t.error().col, fmt::format("{}: {}", key, t.error().what));
  return std::move(*t);
}

MaybeError FileParser::parse_events(const toml::node* events_node, const toml::table& rule_table,
                                    const std::string& label, Rule& rule) const {
  if (events_node == nullptr) {
    return err(rule_table, fmt::format("{} has no events; add at least one [[rule.event]] with name and match",
                                       label));
  }
  const auto* arr = events_node->as_array();
  if (arr == nullptr) {
    if (events_node->is_table()) {
      return err(*events_node, "[rule.event] must be written [[rule.event]] (an array of tables, one per event)");
    }
    return err(*events_node,
               fmt::format("event must be an array of tables ([[rule.event]]), not {}", describe(*events_node)));
  }
  if (arr->empty()) {
    return err(*events_node, fmt::format("{} has no events; add at least one [[rule.event]] with name and match",
                                         label));
  }
  std::map<std::string, Pos> seen;
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const toml::node& node = *arr->get(i);
    if (i == kMaxEvents) {
      return err(node, fmt::format("{} has more than {} events", label, kMaxEvents));
    }
    const auto* et = node.as_table();
    if (et == nullptr) {
      return err(node, fmt::format("each [[rule.event]] must be a table, not {}", describe(node)));
    }
    const toml::node* name = et->get("name");
    std::string ev_label = name != nullptr && name->is_string()
                               ? fmt::format("[[rule.event]] {} of {}", quote(name->as_string()->get()), label)
                               : fmt::format("[[rule.event]] #{} of {}", i + 1, label);
    if (auto e = unknown_keys(*et, kEventKeys, ev_label)) return e;
    if (name == nullptr) return err(node, ev_label + " has no name");
    if (!name->is_string()) return err(*name, fmt::format("event name must be a string, not {}", describe(*name)));
    Event ev;
    ev.name = name->as_string()->get();
    if (!is_identifier(ev.name)) {
      return err(*name, fmt::format("event name {} must start with a letter or \"_\" and hold only letters, "
                                    "digits and \"_\" (when refers to events by name)",
                                    quote(ev.name)));
    }
    if (std::find(kWhenKeywords.begin(), kWhenKeywords.end(), ev.name) != kWhenKeywords.end()) {
      return err(*name, fmt::format("event name {} is a keyword of when (and, or, not); choose another name",
                                    quote(ev.name)));
    }
    Pos here = pos_of(name->source());
    auto [it, fresh] = seen.emplace(ev.name, here);
    if (!fresh) {
      return err(here, fmt::format("duplicate event name {} in {} (first defined at {}:{}:{})", quote(ev.name),
                                   label, file_, it->second.line, it->second.col));
    }
    const toml::node* match = et->get("match");
    if (match == nullptr) return err(node, ev_label + " has no match");
    if (!match->is_string()) {
      return err(*match, fmt::format("match must be a string (an RE2 pattern), not {}", describe(*match)));
    }
    ev.match = match->as_string()->get();
    auto re = regex(*match, RegexUse::Event);
    if (!re) return re.error();
    for (const auto& [group, capture] : (*re)->CapturingGroupNames()) {
      std::string token = "(?P<" + capture + ">";
      std::size_t at = ev.match.find(token);
      int col = static_cast<int>(at) + 1;  // npos + 1 == 0: no column
      if (std::find(ev.captures.begin(), ev.captures.end(), capture) != ev.captures.end()) {
        std::size_t again = at == std::string::npos ? at : ev.match.find(token, at + 1);
        return err_in(*match, static_cast<int>(again) + 1,
                      fmt::format("capture group name {} is used twice in one pattern", quote(capture)));
      }
      if (std::find(kBuiltinFields.begin(), kBuiltinFields.end(), capture) != kBuiltinFields.end()) {
        return err_in(*match, col,
                      fmt::format("capture group {} has the name of a built-in template field; rename it "
                                  "(built-ins: {})",
                                  quote(capture), join(kBuiltinFields, ", ")));
      }
      ev.captures.push_back(capture);
      if (std::find(rule.capture_names.begin(), rule.capture_names.end(), capture) == rule.capture_names.end()) {
        rule.capture_names.push_back(capture);
      }
    }
    rule.event_names.push_back(ev.name);
    rule.events.push_back(std::move(ev));
  }
  return std::nullopt;
}

MaybeError FileParser::parse_rule(const toml::table& t, std::size_t index, PendingRule& out) const {
  Rule& rule = out.rule;
  rule.file = file_;
  rule.line = pos_of(t.source()).line;
  const toml::node* name = t.get("name");
  std::string label = name != nullptr && name->is_string()
                          ? fmt::format("[[rule]] {}", quote(name->as_string()->get()))
                          : fmt::format("[[rule]] #{}", index + 1);
  if (auto e = unknown_keys(t, kRuleKeys, label)) return e;

  if (name == nullptr) return err(t, label + " has no name");
  if (!name->is_string()) return err(*name, fmt::format("name must be a string, not {}", describe(*name)));
  rule.name = name->as_string()->get();
  out.name_pos = pos_of(name->source());
  if (!is_rule_name(rule.name)) {
    return err(*name, fmt::format("rule name {} may contain only letters, digits, \"_\", \".\" and \"-\"",
                                  quote(rule.name)));
  }

  const toml::node* kind = t.get("kind");
  if (kind == nullptr) {
    return err(t, label + " has no kind; add kind = \"alert\" (raise alerts) or kind = \"throttle\" "
                          "(pass at most Y lines, suppress the rest)");
  }
  auto k = choose(*kind, "kind", kKinds);
  if (!k) return k.error();
  rule.kind = *k == 1 ? RuleKind::Throttle : RuleKind::Alert;
  const bool alert = rule.kind == RuleKind::Alert;

  if (auto e = parse_events(t.get("event"), t, label, rule)) return e;

  // The condition: threshold, or window + when; a throttle takes only threshold.
  const toml::node* threshold = t.get("threshold");
  const toml::node* window = t.get("window");
  const toml::node* when = t.get("when");
  if (!alert && when != nullptr) {
    return err(*when, fmt::format("{} is a throttle rule: it takes threshold = \"Y per X\", not when "
                                  "(a throttle passes at most Y lines per window)",
                                  label));
  }
  if (!alert && window != nullptr) {
    return err(*window, fmt::format("{} is a throttle rule: its window comes from threshold = \"Y per X\"; "
                                    "remove window",
                                    label));
  }
  if (threshold != nullptr && (window != nullptr || when != nullptr)) {
    return err(window != nullptr ? *window : *when,
               fmt::format("{} has both threshold and {}; use threshold = \"Y per X\", or window = \"X\" with "
                           "when = \"EXPR\", not both",
                           label, window != nullptr ? "window" : "when"));
  }
  if (threshold != nullptr) {
    const auto* s = threshold->as_string();
    if (s == nullptr) {
      return err(*threshold,
                 fmt::format("threshold must be a string such as \"5 per 1m\", not {}", describe(*threshold)));
    }
    auto th = parse_threshold(s->get());
    if (!th) return err_in(*threshold, th.error().col, th.error().what);
    rule.threshold = th->count;
    rule.window_ms = th->window_ms;
    rule.window_text = th->window_text;
    rule.when = Expr::threshold(th->count, rule.events.size());
    out.window_pos = pos_of(threshold->source());
  } else if (window == nullptr && when == nullptr) {
    return err(t, alert ? fmt::format("{} has no condition; add threshold = \"Y per X\", or window = \"X\" with "
                                      "when = \"EXPR\"",
                                      label)
                        : fmt::format("{} has no threshold; a throttle rule needs threshold = \"Y per X\"", label));
  } else if (when == nullptr) {
    return err(*window, fmt::format("{} has window but no when; add when = \"EXPR\" (or use threshold = \"Y per X\" "
                                    "instead of window)",
                                    label));
  } else if (window == nullptr) {
    return err(*when, fmt::format("{} has when but no window; add window = \"X\", e.g. window = \"5m\"", label));
  } else {
    auto w = duration(*window, "window");
    if (!w) return w.error();
    rule.window_ms = *w;
    rule.window_text = trim(window->as_string()->get());
    out.window_pos = pos_of(window->source());
    const auto* s = when->as_string();
    if (s == nullptr) {
      return err(*when,
                 fmt::format("when must be a string such as \"error / request > 0.05\", not {}", describe(*when)));
    }
    auto ex = Expr::parse(s->get(), rule.event_names);
    if (!ex) return err_in(*when, ex.error().col, "when: " + ex.error().what);
    rule.when = std::move(*ex);
    rule.when_text = s->get();
  }

  if (const toml::node* ignore = t.get("ignore")) {
    if (!ignore->is_string()) {
      return err(*ignore, fmt::format("ignore must be a string (an RE2 pattern), not {}", describe(*ignore)));
    }
    if (ignore->as_string()->get().empty()) {
      return err(*ignore, "ignore must not be empty: an empty pattern matches every line, so nothing would count");
    }
    auto re = regex(*ignore, RegexUse::Ignore);
    if (!re) return re.error();
    rule.ignore = ignore->as_string()->get();
  }

  // Template fields: built-ins by Field id, then the captures.
  std::vector<std::string> key_names{kBuiltinFields[kFieldRule], kBuiltinFields[kFieldEvent]};
  std::vector<int> key_ids{kFieldRule, kFieldEvent};
  std::vector<std::string> message_names = kBuiltinFields;
  std::vector<int> message_ids;
  for (int i = 0; i < kFieldFirstCapture; ++i) message_ids.push_back(i);
  for (std::size_t i = 0; i < rule.capture_names.size(); ++i) {
    key_names.push_back(rule.capture_names[i]);
    key_ids.push_back(kFieldFirstCapture + static_cast<int>(i));
    message_names.push_back(rule.capture_names[i]);
    message_ids.push_back(kFieldFirstCapture + static_cast<int>(i));
  }
  if (const toml::node* key = t.get("key")) {
    auto tpl = parse_template(*key, "key", key_names, key_ids);
    if (!tpl) return tpl.error();
    rule.key = std::move(*tpl);
  }
  if (const toml::node* message = t.get("message")) {
    auto tpl = parse_template(*message, "message", message_names, message_ids);
    if (!tpl) return tpl.error();
    rule.message = std::move(*tpl);
  }

  if (const toml::node* cooldown = t.get("cooldown")) {
    if (!alert) {
      return err(*cooldown, fmt::format("{} is a throttle rule; cooldown applies to alert rules only", label));
    }
    // "0": alert on every event while the condition holds. parse_duration
    // rejects zero, which is right for windows but not for a cooldown.
    if (cooldown->is_string() && cooldown->as_string()->get() == "0") {
      rule.cooldown_ms = 0;
    } else {
      auto c = duration(*cooldown, "cooldown");
      if (!c) return c.error();
      rule.cooldown_ms = *c;
    }
    out.cooldown_set = true;
  }
  if (const toml::node* resolve = t.get("resolve")) {
    if (!alert) {
      return err(*resolve, fmt::format("{} is a throttle rule; resolve applies to alert rules only", label));
    }
    if (!resolve->is_boolean()) {
      return err(*resolve, fmt::format("resolve must be true or false, not {}", describe(*resolve)));
    }
    rule.resolve = resolve->as_boolean()->get();
  }
  if (const toml::node* exec = t.get("exec")) {
    const auto* arr = exec->as_array();
    if (arr == nullptr || arr->empty()) {
      return err(*exec, fmt::format("exec must be a non-empty array of strings (the program and its arguments, "
                                    "run without a shell), e.g. exec = [\"notify-send\", \"alert\"], not {}",
                                    describe(*exec)));
    }
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const toml::node& arg = *arr->get(i);
      if (!arg.is_string()) return err(arg, fmt::format("exec[{}] must be a string, not {}", i, describe(arg)));
      if (i == 0 && arg.as_string()->get().empty()) return err(arg, "exec[0] (the program) must not be empty");
      rule.exec.push_back(arg.as_string()->get());
    }
  }
  if (const toml::node* mode = t.get("mode")) {
    auto m = choose(*mode, "mode", kModes);
    if (!m) return m.error();
    out.mode = *m == 1 ? Mode::Accurate : Mode::Efficient;
  }
  if (const toml::node* buckets = t.get("buckets")) {
    auto b = integer(*buckets, "buckets", 1, kMaxBuckets);
    if (!b) return b.error();
    out.buckets = static_cast<uint32_t>(*b);
    out.buckets_pos = pos_of(buckets->source());
  }
  if (const toml::node* max_keys = t.get("max_keys")) {
    auto m = integer(*max_keys, "max_keys", 1, INT64_MAX);
    if (!m) return m.error();
    out.max_keys = static_cast<uint64_t>(*m);
  }
  return std::nullopt;
}

Result<ParsedFile> FileParser::parse() {
  toml::table root;
#if TOML_EXCEPTIONS
  try {
    root = toml::parse(text_, std::string_view(file_));
  } catch (const toml::parse_error& e) {
    return err(pos_of(e.source()), std::string(e.description()));
  }
#else
  toml::parse_result parsed = toml::parse(text_, std::string_view(file_));
  if (!parsed) return err(pos_of(parsed.error().source()), std::string(parsed.error().description()));
  root = std::move(parsed).table();
#endif

  ParsedFile out;
  out.file = file_;
  for (auto [k, v] : ordered(root)) {
    const std::string key(k->str());
    if (key == "settings" || key == "rule") continue;
    bool settings_key = std::find(kSettingsKeys.begin(), kSettingsKeys.end(), key) != kSettingsKeys.end();
    bool rule_key = std::find(kRuleKeys.begin(), kRuleKeys.end(), key) != kRuleKeys.end();
    if (settings_key && rule_key && !v->is_table()) {
      return err(*k, fmt::format("key {} belongs in [settings] or in a [[rule]]; put it below a [settings] or "
                                 "[[rule]] line",
                                 quote(key)));
    }
    if (settings_key && !v->is_table()) {
      return err(*k, fmt::format("key {} belongs in [settings]; put it below a [settings] line", quote(key)));
    }
    if (rule_key && !v->is_table()) {
      return err(*k, fmt::format("key {} belongs in a rule; put it below a [[rule]] line", quote(key)));
    }
    return err(*k, fmt::format("unknown {} {} at the top level{}; only [settings] and [[rule]] may appear there",
                               v->is_table() || v->is_array() ? "table" : "key", quote(key),
                               did_you_mean(key, kTopKeys)));
  }

  if (const toml::node* settings = root.get("settings")) {
    const auto* st = settings->as_table();
    if (st == nullptr) {
      return err(*settings, fmt::format("settings must be a table ([settings]), not {}", describe(*settings)));
    }
    if (auto e = parse_settings(*st, out)) return *e;
  }

  if (const toml::node* rules = root.get("rule")) {
    const auto* arr = rules->as_array();
    if (arr == nullptr) {
      if (rules->is_table()) {
        return err(root.find("rule")->first, "[rule] must be written [[rule]] (an array of tables, one per rule)");
      }
      return err(*rules, fmt::format("rule must be an array of tables ([[rule]]), not {}", describe(*rules)));
    }
    std::map<std::string, Pos> names;
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const toml::node& node = *arr->get(i);
      const auto* rt = node.as_table();
      if (rt == nullptr) return err(node, fmt::format("each [[rule]] must be a table, not {}", describe(node)));
      PendingRule pending;
      if (auto e = parse_rule(*rt, i, pending)) return *e;
      auto [it, fresh] = names.emplace(pending.rule.name, pending.name_pos);
      if (!fresh) {
        return err(pending.name_pos, fmt::format("duplicate rule name {} (first defined at {}:{}:{})",
                                                 quote(pending.rule.name), file_, it->second.line, it->second.col));
      }
      out.rules.push_back(std::move(pending));
    }
  }
  return out;
}

// Applies the settings' defaults and checks what depends on them.
Result<Rule> finish_rule(PendingRule&& p, const Settings& s) {
  Rule r = std::move(p.rule);
  r.buckets = p.buckets.value_or(s.buckets);
  r.mode = p.mode.value_or(s.mode);
  r.mode_set = p.mode.has_value();
  r.max_keys = p.max_keys.value_or(s.max_keys);
  if (r.window_ms % r.buckets != 0 || r.window_ms / r.buckets < 1) {
    Pos at = p.buckets ? p.buckets_pos : p.window_pos;
    std::vector<std::string> fits;
    for (int64_t b : near_divisors(r.window_ms, r.buckets)) fits.push_back(std::to_string(b));
    return Error{r.file, at.line, at.col,
                 fmt::format("window {} ({} ms) does not divide into {} buckets; bucket counts that fit near {}: {}",
                             quote(r.window_text), r.window_ms, r.buckets, r.buckets, join(fits, ", "))};
  }
  if (r.kind == RuleKind::Alert && !p.cooldown_set) r.cooldown_ms = r.window_ms;
  r.fingerprint = make_fingerprint(r);
  return r;
}

Result<std::string> read_file(const std::string& path) {
  auto fail = [&](int e) { return Error{path, 0, 0, "cannot read rules file: " + std::string(std::strerror(e))}; };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(errno);
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      return fail(e);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

void copy_setting(Settings& dst, const Settings& src, const std::string& key) {
  if (key == "mode") dst.mode = src.mode;
  else if (key == "buckets") dst.buckets = src.buckets;
  else if (key == "time") dst.time = src.time;
  else if (key == "timestamp") dst.timestamp = src.timestamp;
  else if (key == "timezone") dst.timezone = src.timezone;
  else if (key == "year") dst.year = src.year;
  else if (key == "max_keys") dst.max_keys = src.max_keys;
}

Result<RuleSet> finish(std::vector<ParsedFile>& files, Settings settings) {
  RuleSet set;
  set.settings = std::move(settings);
  for (auto& f : files) {
    for (auto& p : f.rules) {
      auto r = finish_rule(std::move(p), set.settings);
      if (!r) return std::move(r.error());
      set.rules.push_back(std::move(*r));
    }
  }
  return set;
}

}  // namespace

Result<RuleSet> parse_rules(std::string_view toml_text, std::string_view file_name) {
  auto parsed = FileParser(toml_text, file_name).parse();
  if (!parsed) return std::move(parsed.error());
  if (parsed->rules.empty()) return Error{std::string(file_name), 0, 0, "no [[rule]] defined"};
  Settings settings = parsed->settings;
  std::vector<ParsedFile> files;
  files.push_back(std::move(*parsed));
  return finish(files, std::move(settings));
}

Result<RuleSet> load_rules(std::span<const std::string> paths) {
  if (paths.empty()) return Error{"", 0, 0, "no rules file given"};
  std::vector<ParsedFile> files;
  for (const auto& path : paths) {
    auto text = read_file(path);
    if (!text) return std::move(text.error());
    auto parsed = FileParser(*text, path).parse();
    if (!parsed) return std::move(parsed.error());
    files.push_back(std::move(*parsed));
  }

  Settings merged;
  struct First {
    const std::string* file;
    const GivenSetting* given;
  };
  std::map<std::string, First> first_setting;
  std::map<std::string, std::pair<const std::string*, Pos>> first_rule;
  std::size_t rule_count = 0;
  for (const auto& f : files) {
    std::vector<std::pair<const std::string*, const GivenSetting*>> given;
    for (const auto& [key, g] : f.given) given.emplace_back(&key, &g);
    std::sort(given.begin(), given.end(), [](const auto& a, const auto& b) {
      return a.second->pos.line != b.second->pos.line ? a.second->pos.line < b.second->pos.line
                                                       : a.second->pos.col < b.second->pos.col;
    });
    for (const auto& [key, g] : given) {
      auto [it, fresh] = first_setting.emplace(*key, First{&f.file, g});
      if (fresh) {
        copy_setting(merged, f.settings, *key);
      } else if (it->second.given->canon != g->canon) {
        const GivenSetting& first = *it->second.given;
        return Error{f.file, g->pos.line, g->pos.col,
                     fmt::format("{} = {} conflicts with {} = {} in {}:{}:{}; a setting given in more than one "
                                 "rules file must have the same value in each",
                                 *key, g->shown, *key, first.shown, *it->second.file, first.pos.line, first.pos.col)};
      }
    }
    for (const auto& p : f.rules) {
      auto [it, fresh] = first_rule.emplace(p.rule.name, std::make_pair(&f.file, p.name_pos));
      if (!fresh) {
        return Error{f.file, p.name_pos.line, p.name_pos.col,
                     fmt::format("duplicate rule name {} (first defined at {}:{}:{})", quote(p.rule.name),
                                 *it->second.first, it->second.second.line, it->second.second.col)};
      }
    }
    rule_count += f.rules.size();
  }
  if (rule_count == 0) {
    if (paths.size() == 1) return Error{paths[0], 0, 0, "no [[rule]] defined"};
    return Error{"", 0, 0, fmt::format("no [[rule]] defined in any of {}", join({paths.begin(), paths.end()}, ", "))};
  }
  return finish(files, std::move(merged));
}

std::string fingerprint(const Rule& rule) { return make_fingerprint(rule); }

}  // namespace swthrottle::config
