#include "app/check_inputs.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "input/line_reader.h"
#include "match/logtime.h"
#include "pipeline/stamp_watch.h"
#include "util/json.h"

namespace swthrottle::app {

namespace {

using Form = config::TimestampSpec::Form;

// The built-in forms, as `timestamp` names them.
struct NamedForm {
  const char* name;
  Form form;
};
constexpr NamedForm kForms[] = {{"auto", Form::Auto},
                                {"rfc3339", Form::Rfc3339},
                                {"syslog", Form::Syslog},
                                {"epoch", Form::Epoch},
                                {"clf", Form::Clf},
                                {"ymd_slash", Form::YmdSlash},
                                {"iso_basic", Form::IsoBasic},
                                {"json_epoch", Form::JsonEpoch}};

struct Reading {
  std::size_t stamped = 0;  // lines that gave a time
  std::size_t first = 0;    // the first of them (an index)
  int64_t first_ms = 0;
  std::string field;  // the JSON field the first one's time came from ("": its text)
};

Reading read_all(const match::LogTime& lt, const std::vector<std::string>& lines, int64_t wall_ms) {
  Reading r;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (auto t = lt.parse(lines[i], wall_ms)) {
      if (r.stamped++ == 0) {
        r.first = i;
        r.first_ms = *t;
        r.field = lt.stamp_field(lines[i], wall_ms);
      }
    }
  }
  return r;
}

std::string first_of(const Reading& r, const std::vector<std::string>& lines) {
  std::string when;
  append_rfc3339_ms(when, r.first_ms);
  const std::string field = r.field.empty() ? std::string() : fmt::format(" (its field \"{}\")", r.field);
  return fmt::format("first {} from line {}{}: \"{}\"", when, r.first + 1, field,
                     pipeline::StampWatch::shown_line(lines[r.first]));
}

std::string of_lines(std::size_t n, bool more) {
  return more ? fmt::format("of the first {} lines", n) : fmt::format("of {} line{}", n, n == 1 ? "" : "s");
}

void check_one(const config::Settings& s, const std::string& name, int64_t wall_ms, InputsChecked& out) {
  const std::string shown = name == "-" ? "(standard input)" : name;
  const int fd = name == "-" ? 0 : ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    out.text += fmt::format("input {}: cannot open: {}\n", shown, std::strerror(errno));
    out.failed = true;
    return;
  }
  std::vector<std::string> lines;
  bool more = false;
  {
    input::LineReader reader(fd);
    std::string notice;
    reader.sniff([&notice](const std::string& m) { notice = m; });
    while (auto line = reader.next()) {
      if (lines.size() == kSampleLines) {
        more = true;
        break;
      }
      lines.emplace_back(line->text);
    }
    if (!reader.error().empty()) {
      out.text += fmt::format("input {}: read error: {}\n", shown, reader.error());
      out.failed = true;
    }
    if (!notice.empty()) out.text += fmt::format("input {}: {}\n", shown, notice);
  }
  if (fd != 0) ::close(fd);
  if (lines.empty()) {
    out.text += fmt::format("input {}: empty\n", shown);
    return;
  }

  // The first [[settings.input]] whose path matches, else [settings].
  const config::TimestampSpec* spec = &s.timestamp;
  const config::TimezoneSpec* tz = &s.timezone;
  std::string where;
  for (const config::InputTime& in : s.inputs) {
    if (::fnmatch(in.path.c_str(), name.c_str(), 0) != 0) continue;
    if (in.timestamp) spec = &*in.timestamp;
    if (in.timezone) tz = &*in.timezone;
    where = fmt::format(" ([[settings.input]] path = \"{}\")", in.path);
    break;
  }
  const std::string setting = (spec->text.empty() ? "auto" : spec->text) + where;
  auto configured = match::LogTime::make(*spec, *tz, s.year);  // made once already: cannot fail
  if (!configured) return;
  const Reading r = read_all(*configured, lines, wall_ms);
  if (r.stamped > 0) {
    out.text += fmt::format("input {}: timestamp {} reads {} {}; {}\n", shown, setting, r.stamped,
                            of_lines(lines.size(), more), first_of(r, lines));
  } else {
    std::size_t sample = 0;
    while (sample + 1 < lines.size() && lines[sample].find_first_not_of(" \t\r") == std::string::npos) ++sample;
    out.text += fmt::format("input {}: timestamp {} reads none {}; e.g. line {}: \"{}\"\n", shown, setting,
                            of_lines(lines.size(), more), sample + 1, pipeline::StampWatch::shown_line(lines[sample]));
    if (s.time == config::TimeSource::Log) out.failed = true;
  }
  if (r.stamped * 2 >= lines.size()) return;

  // None or few: the built-in forms that read more.
  const char* best = nullptr;
  std::size_t best_count = r.stamped;
  for (const NamedForm& f : kForms) {
    config::TimestampSpec form;
    form.form = f.form;
    auto lt = match::LogTime::make(form, *tz, s.year);
    if (!lt) continue;
    const Reading other = read_all(*lt, lines, wall_ms);
    if (other.stamped <= r.stamped) continue;
    out.text += fmt::format("  timestamp = \"{}\" reads {}; {}\n", f.name, other.stamped, first_of(other, lines));
    if (other.stamped > best_count) {
      best = f.name;
      best_count = other.stamped;
    }
  }
  if (best != nullptr) {
    out.text +=
        fmt::format("  set timestamp = \"{}\" in {}\n", best, where.empty() ? "[settings]" : "that [[settings.input]]");
  } else {
    out.text += fmt::format(
        "  no built-in form reads more: set timestamp to a strptime format, or to {{ match = 'REGEX', "
        "format = \"...\" }} (swthrottle(1), Timestamps)\n");
  }
}

}  // namespace

InputsChecked check_inputs(const config::Settings& settings, const std::vector<std::string>& names, int64_t wall_ms) {
  InputsChecked out;
  for (const std::string& name : names) check_one(settings, name, wall_ms, out);
  return out;
}

}  // namespace swthrottle::app
