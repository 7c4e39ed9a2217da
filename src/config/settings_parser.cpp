#include "config/settings_parser.h"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "config/regex_lint.h"
#include "util/suggest.h"
#include "util/tz_database.h"

namespace swthrottle::config {
namespace {

const std::vector<std::string> kTimestampKeys{"match", "format", "field"};
const std::vector<std::string> kInputKeys{"path", "timestamp", "timezone", "format", "multiline"};
const std::vector<std::string> kMultilinePresets{"java", "python", "off"};
const std::vector<std::string> kMultilineKeys{"start", "continue", "preset", "max_lines", "max_bytes"};
const std::vector<std::string> kForms{"auto", "rfc3339",   "syslog",    "epoch",
                                      "clf",  "ymd_slash", "iso_basic", "json_epoch"};

// A timestamp form name, or a strptime format (anything with a '%').
Result<TimestampSpec::Form> timestamp_form(const TomlReader& in, const toml::node& v, std::string_view key,
                                           bool table_allowed, std::string& format) {
  std::vector<std::string> forms;
  for (const auto& f : kForms) forms.push_back(quote(f));
  std::string expected =
      fmt::format("{} must be {}, a strptime format (containing %){}, not {}", key, join(forms, ", "),
                  table_allowed ? " or a table { match = 'REGEX', format = \"...\" }" : "", describe(v));
  const auto* s = v.as_string();
  if (s == nullptr) return in.err(v, expected);
  const std::string& text = s->get();
  if (text.find('%') != std::string::npos) {
    format = text;
    return TimestampSpec::Form::Strptime;
  }
  static const TimestampSpec::Form kFormValues[] = {TimestampSpec::Form::Auto,     TimestampSpec::Form::Rfc3339,
                                                    TimestampSpec::Form::Syslog,   TimestampSpec::Form::Epoch,
                                                    TimestampSpec::Form::Clf,      TimestampSpec::Form::YmdSlash,
                                                    TimestampSpec::Form::IsoBasic, TimestampSpec::Form::JsonEpoch};
  for (std::size_t i = 0; i < kForms.size(); ++i) {
    if (text == kForms[i]) return kFormValues[i];
  }
  return in.err(v, expected + did_you_mean(text, kForms));
}

Result<TimestampSpec> timestamp(const TomlReader& in, const toml::node& v) {
  TimestampSpec spec;
  if (const auto* t = v.as_table()) {
    if (auto e = in.unknown_keys(*t, kTimestampKeys, "settings.timestamp")) return *e;
    const toml::node* match = t->get("match");
    if (const toml::node* field = t->get("field")) {
      if (match != nullptr || t->get("format") != nullptr) {
        return in.err(v, "settings.timestamp: field goes alone (the field's text is RFC 3339 or an epoch number)");
      }
      if (!field->is_string() || field->as_string()->get().empty()) {
        return in.err(*field,
                      fmt::format("timestamp field must be a field path such as \"ts\", not {}", describe(*field)));
      }
      spec.field = field->as_string()->get();
      spec.text = fmt::format("{{ field = {} }}", quote(spec.field));
      return spec;
    }
    if (match == nullptr) {
      return in.err(v,
                    "settings.timestamp has no match; give match = 'REGEX' whose first capture group holds "
                    "the timestamp");
    }
    if (!match->is_string()) {
      return in.err(*match, fmt::format("timestamp match must be a string (an RE2 pattern), not {}", describe(*match)));
    }
    auto re = compile_regex(in, *match, RegexUse::Timestamp);
    if (!re) return std::move(re.error());
    spec.match = match->as_string()->get();
    if ((*re)->NumberOfCapturingGroups() < 1) {
      return in.err(*match, fmt::format("timestamp match '{}' has no capture group; put the timestamp in the "
                                        "first group, e.g. '^\\[([^\\]]+)\\]'",
                                        spec.match));
    }
    std::string format_text = "auto";
    if (const toml::node* format = t->get("format")) {
      auto form = timestamp_form(in, *format, "timestamp format", false, spec.format);
      if (!form) return std::move(form.error());
      spec.form = *form;
      format_text = format->as_string()->get();
    }
    spec.text = fmt::format("{{ match = '{}', format = {} }}", spec.match, quote(format_text));
    return spec;
  }
  auto form = timestamp_form(in, v, "timestamp", true, spec.format);
  if (!form) return std::move(form.error());
  spec.form = *form;
  spec.text = v.as_string()->get();
  return spec;
}

// "local", "UTC" (or "Z"), "+02:00", "-0530", "+02", or a zone of the tz
// database ("Europe/Berlin").
Result<TimezoneSpec> timezone(const TomlReader& in, const toml::node& v) {
  std::string expected = fmt::format(
      "timezone must be \"local\", \"UTC\", an offset such as \"+02:00\" or \"-0530\", or a zone name such as "
      "\"Europe/Berlin\", not {}",
      describe(v));
  const auto* s = v.as_string();
  if (s == nullptr) return in.err(v, expected);
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
    return in.err(v, expected);
  }
  // Not an offset: a zone name, which starts with a letter.
  if (text.empty() || !((lower[0] >= 'a' && lower[0] <= 'z'))) return in.err(v, expected);
  std::string why;
  if (tz::find_zone(text, &why) == nullptr) return in.err(v, why);
  tz.name = text;
  return tz;
}

// max_future, max_jump: a duration, or "off" (-1).
Result<int64_t> bound_or_off(const TomlReader& in, const toml::node& v, std::string_view key) {
  if (!v.is_string())
    return in.err(v,
                  fmt::format("{} must be a duration such as \"1m\" or \"1d\", or \"off\", not {}", key, describe(v)));
  if (v.as_string()->get() == "off") return int64_t{-1};
  return in.duration(v, key);
}

// One timestamp setting, with where it was written (for LogTime's errors).
Result<TimestampSpec> timestamp_at(const TomlReader& in, const toml::node& v) {
  auto ts = timestamp(in, v);
  if (!ts) return ts;
  const Pos at = pos_of(v.source());
  ts->file = in.file();
  ts->line = at.line;
  ts->col = at.col;
  return ts;
}

// format: "auto", "text", "json", "cri" or "docker".
Result<InputFormat> read_format(const TomlReader& in, const toml::node& v) {
  return in.choose(
      v, "format",
      std::array{InputFormat::Auto, InputFormat::Text, InputFormat::Json, InputFormat::Cri, InputFormat::Docker});
}

// multiline = "java" | "python" | "off" | { start = 'RE2' } | { continue = 'RE2' }
// | { preset = "java" }, the tables with max_lines and max_bytes
// (input/event_grouper.h).
Result<MultilineSpec> multiline(const TomlReader& in, const toml::node& v) {
  const std::string expected = fmt::format(
      "multiline must be \"java\", \"python\", \"off\", {{ start = 'REGEX' }}, {{ continue = 'REGEX' }} or "
      "{{ preset = \"java\" }} (a table may add max_lines and max_bytes), not {}",
      describe(v));
  MultilineSpec spec;
  // The string form, or a table's preset (whose error names the key).
  auto preset = [&](const toml::node& p, const std::string& wanted) -> MaybeError {
    const auto* s = p.as_string();
    if (s == nullptr) return in.err(p, wanted);
    const std::string& text = s->get();
    spec.text = text;
    if (text == "java") spec.kind = MultilineSpec::Kind::Java;
    else if (text == "python") spec.kind = MultilineSpec::Kind::Python;
    else if (text == "off") spec.kind = MultilineSpec::Kind::Off;
    else return in.err(p, wanted + did_you_mean(text, kMultilinePresets));
    return std::nullopt;
  };
  if (v.is_string()) {
    if (auto e = preset(v, expected)) return *e;
    return spec;
  }
  const auto* t = v.as_table();
  if (t == nullptr) return in.err(v, expected);
  if (auto e = in.unknown_keys(*t, kMultilineKeys, "multiline")) return *e;
  const toml::node* start = t->get("start");
  const toml::node* cont = t->get("continue");
  const toml::node* named = t->get("preset");
  if ((start != nullptr) + (cont != nullptr) + (named != nullptr) != 1) {
    return in.err(v,
                  "multiline needs exactly one of start = 'REGEX' (a line it finds starts an event), "
                  "continue = 'REGEX' (a line it finds continues the event before it) or preset = \"java\" "
                  "or \"python\"");
  }
  if (named != nullptr) {
    if (auto e =
            preset(*named, fmt::format("preset must be \"java\", \"python\" or \"off\", not {}", describe(*named))))
      return *e;
    spec.text = "{ preset = \"" + spec.text + "\"";
  } else {
    const toml::node& p = start ? *start : *cont;
    if (!p.is_string())
      return in.err(p, fmt::format("multiline pattern must be a string (an RE2 pattern), not {}", describe(p)));
    auto re = compile_regex(in, p, RegexUse::Timestamp);
    if (!re) return std::move(re.error());
    spec.kind = start ? MultilineSpec::Kind::Start : MultilineSpec::Kind::Continue;
    spec.pattern = p.as_string()->get();
    spec.text = fmt::format("{{ {} = '{}'", start ? "start" : "continue", spec.pattern);
  }
  if (const toml::node* n = t->get("max_lines")) {
    auto m = in.integer(*n, "max_lines", 1, 1'000'000);
    if (!m) return std::move(m.error());
    spec.max_lines = static_cast<uint32_t>(*m);
    spec.text += fmt::format(", max_lines = {}", *m);
  }
  if (const toml::node* n = t->get("max_bytes")) {
    auto m = in.integer(*n, "max_bytes", 1, 64 << 20);
    if (!m) return std::move(m.error());
    spec.max_bytes = static_cast<uint64_t>(*m);
    spec.text += fmt::format(", max_bytes = {}", *m);
  }
  spec.text += " }";
  return spec;
}

// [[settings.input]]: path = "GLOB", and timestamp, timezone, format and/or multiline.
MaybeError parse_inputs(const TomlReader& in, const toml::node& v, std::vector<InputTime>& out, std::string& canon) {
  const auto* arr = v.as_array();
  if (arr == nullptr || !arr->is_array_of_tables()) {
    return in.err(v,
                  fmt::format("settings.input must be an array of tables ([[settings.input]]), not {}", describe(v)));
  }
  for (const toml::node& node : *arr) {
    const toml::table& t = *node.as_table();
    if (auto e = in.unknown_keys(t, kInputKeys, "[[settings.input]]")) return e;
    InputTime it;
    const toml::node* path = t.get("path");
    if (path == nullptr || !path->is_string() || path->as_string()->get().empty()) {
      return in.err(path ? *path : node,
                    "[[settings.input]] needs path = \"GLOB\": the inputs it is for, as the command line names them "
                    "(\"-\": standard input)");
    }
    it.path = path->as_string()->get();
    if (const toml::node* ts = t.get("timestamp")) {
      auto spec = timestamp_at(in, *ts);
      if (!spec) return spec.error();
      it.timestamp = std::move(*spec);
    }
    if (const toml::node* tz = t.get("timezone")) {
      auto zone = timezone(in, *tz);
      if (!zone) return zone.error();
      it.timezone = std::move(*zone);
    }
    if (const toml::node* f = t.get("format")) {
      auto format = read_format(in, *f);
      if (!format) return format.error();
      it.format = *format;
    }
    if (const toml::node* ml = t.get("multiline")) {
      auto spec = multiline(in, *ml);
      if (!spec) return spec.error();
      it.multiline = std::move(*spec);
    }
    if (!it.timestamp && !it.timezone && !it.format && !it.multiline) {
      return in.err(node, fmt::format("[[settings.input]] for {} sets none of timestamp, timezone, format, multiline",
                                      quote(it.path)));
    }
    canon += fmt::format("{}|{}|{}|{}", it.path, it.timestamp ? it.timestamp->text : "",
                         it.timestamp ? it.timestamp->match : "", it.timezone ? it.timezone->text : "");
    if (it.format) canon += fmt::format("|{}", to_string(*it.format));  // only then: older canons stay as they were
    canon += ";";
    if (it.multiline) canon += fmt::format("multiline={};", it.multiline->text);
    out.push_back(std::move(it));
  }
  return std::nullopt;
}

}  // namespace

Result<Mode> read_mode(const TomlReader& in, const toml::node& v) {
  return in.choose(v, "mode", std::array{Mode::Efficient, Mode::Accurate});
}

Result<uint32_t> read_buckets(const TomlReader& in, const toml::node& v) {
  auto b = in.integer(v, "buckets", 1, kMaxBuckets);
  if (!b) return std::move(b.error());
  return static_cast<uint32_t>(*b);
}

MaybeError parse_settings(const TomlReader& in, const toml::table& t, Settings& s,
                          std::map<std::string, GivenSetting>& given_keys) {
  if (auto e = in.unknown_keys(t, kSettingsKeys, "[settings]")) return e;
  for (auto [k, v] : ordered(t)) {
    const std::string key(k->str());
    GivenSetting given{"", describe(*v), pos_of(v->source())};
    if (key == "mode") {
      auto m = read_mode(in, *v);
      if (!m) return m.error();
      s.mode = *m;
      given.canon = to_string(*m);
    } else if (key == "buckets") {
      auto b = read_buckets(in, *v);
      if (!b) return b.error();
      s.buckets = *b;
      given.canon = std::to_string(*b);
    } else if (key == "time") {
      auto m = in.choose(*v, "time", std::array{TimeSource::Arrival, TimeSource::Log});
      if (!m) return m.error();
      s.time = *m;
      given.canon = to_string(*m);
    } else if (key == "timestamp") {
      auto ts = timestamp(in, *v);
      if (!ts) return ts.error();
      s.timestamp = std::move(*ts);
      // Kept so that errors found later (the strptime format, by LogTime) point here.
      const Pos at = pos_of(v->source());
      s.timestamp.file = in.file();
      s.timestamp.line = at.line;
      s.timestamp.col = at.col;
      given.canon = fmt::format("{}|{}|{}", static_cast<int>(s.timestamp.form), s.timestamp.format, s.timestamp.match);
      if (!s.timestamp.field.empty()) given.canon += "|field=" + s.timestamp.field;
      given.shown = v->is_table() ? s.timestamp.text : describe(*v);
    } else if (key == "timezone") {
      auto tz = timezone(in, *v);
      if (!tz) return tz.error();
      s.timezone = std::move(*tz);
      given.canon = s.timezone.local           ? "local"
                    : !s.timezone.name.empty() ? s.timezone.name
                                               : std::to_string(s.timezone.offset_minutes);
    } else if (key == "format") {
      auto f = read_format(in, *v);
      if (!f) return f.error();
      s.format = *f;
      given.canon = to_string(*f);
    } else if (key == "year") {
      auto y = in.integer(*v, "year", 1970, 9999);
      if (!y) return y.error();
      s.year = static_cast<int>(*y);
      given.canon = std::to_string(*y);
    } else if (key == "input") {
      s.inputs.clear();
      if (auto e = parse_inputs(in, *v, s.inputs, given.canon)) return e;
      given.shown = "[[settings.input]] " + given.canon;
    } else if (key == "multiline") {
      auto spec = multiline(in, *v);
      if (!spec) return spec.error();
      s.multiline = std::move(*spec);
      given.canon = s.multiline.text;
    } else if (key == "max_keys") {
      auto m = in.integer(*v, "max_keys", 1, INT64_MAX);
      if (!m) return m.error();
      s.max_keys = static_cast<uint64_t>(*m);
      given.canon = std::to_string(*m);
    } else if (key == "max_future" || key == "max_jump" || key == "quiet_after") {
      auto b = bound_or_off(in, *v, key);
      if (!b) return b.error();
      (key == "max_future" ? s.max_future_ms : key == "max_jump" ? s.max_jump_ms : s.quiet_after_ms) = *b;
      given.canon = std::to_string(*b);
    }
    given_keys[key] = std::move(given);
  }
  return std::nullopt;
}

}  // namespace swthrottle::config
