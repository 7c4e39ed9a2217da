#include "app/default_time.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>

#include <fmt/format.h>

#include "input/envelope_framer.h"
#include "input/event_grouper.h"
#include "input/line_reader.h"
#include "match/logtime.h"
#include "pipeline/batch.h"

namespace swthrottle::app {

namespace {

// The first [[settings.input]] whose path matches `name`, as
// pipeline::Generation::input_entry finds it (there is no Generation yet).
const config::InputTime* entry_for(const config::Settings& s, const std::string& name) {
  for (const config::InputTime& e : s.inputs)
    if (::fnmatch(e.path.c_str(), name.c_str(), 0) == 0) return &e;
  return nullptr;
}

template <typename T>
const T& setting_for(const config::InputTime* e, std::optional<T> config::InputTime::*field, const T& fallback) {
  return e != nullptr && (e->*field) ? *(e->*field) : fallback;
}

// Why `name` is not a replayed file ("": it is one).
std::string live_why(const std::string& name, bool follow) {
  if (name == "-") return "standard input is read as it comes";
  if (follow) return name + " is followed";
  struct stat st {};
  // One that cannot be stat'ed cannot be opened either: the run says so.
  if (::stat(name.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return name + " is not a regular file";
  return "";
}

}  // namespace

// The input's lines as its reader gives them to the run (decompressed, its
// envelope taken off, grouped into events), stamped by its own setting, as
// Batch::match stamps them: one batch is read at a time, and a sample needs
// only the first.
pipeline::StampSample sample_file(const config::Settings& s, const std::string& path, std::size_t max_line,
                                  int64_t wall_ms) {
  pipeline::StampSample sample;
  const config::InputTime* entry = entry_for(s, path);
  auto logtime = match::LogTime::make(setting_for(entry, &config::InputTime::timestamp, s.timestamp),
                                      setting_for(entry, &config::InputTime::timezone, s.timezone), s.year);
  if (!logtime) return sample;  // a setting that cannot read anything; the run's load reports it
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return sample;
  {
    input::LineReader reader(fd, max_line);
    reader.sniff([](const std::string&) {});  // the run reports what sniffing finds
    std::optional<input::EventGrouper> grouper;
    input::EnvelopeFramer framer(max_line);
    pipeline::Batch b;
    do {
      pipeline::fill_input(b, reader, grouper, framer, setting_for(entry, &config::InputTime::multiline, s.multiline),
                           setting_for(entry, &config::InputTime::format, s.format), /*own=*/false);
      b.match(nullptr, &*logtime, wall_ms);
      for (std::size_t i = 0; i < b.size() && !sample.full(); ++i)
        if (!pipeline::StampSample::blank(b.line(i))) sample.add(b.stamps[i] != pipeline::kNoStamp);
    } while (!b.last && !sample.full());
  }
  ::close(fd);
  return sample;
}

DefaultTime default_time(const config::Settings& settings, const std::vector<std::string>& inputs, bool follow,
                         std::size_t max_line, int64_t wall_ms) {
  const std::vector<std::string> names = inputs.empty() ? std::vector<std::string>{"-"} : inputs;
  // Live inputs first: they decide without reading anything.
  for (const std::string& name : names) {
    if (std::string why = live_why(name, follow); !why.empty()) return {config::TimeSource::Arrival, std::move(why)};
  }
  for (const std::string& name : names) {
    const pipeline::StampSample sample = sample_file(settings, name, max_line, wall_ms);
    if (sample.lines > 0 && !sample.carries()) {
      return {config::TimeSource::Arrival,
              fmt::format("{} has a timestamp in only {} of its first {} lines", name, sample.stamped, sample.lines)};
    }
  }
  return {config::TimeSource::Log, ""};
}

}  // namespace swthrottle::app
