#include "pipeline/batch.h"

namespace swthrottle::pipeline {

void Batch::fill(input::LineReader& reader, bool own) {
  last = !reader.next_lines(lines, kLines, kBytes);
  streams.clear();
  origin_ms.clear();
  events = false;
  cut = 0;
  // A mapped file's text outlives the reader's next call: no copy needed.
  if (own && !lines.mapped) {
    storage.assign(lines.text);
    lines.text = storage;
  }
}

void Batch::fill(input::LineReader& reader, input::EventGrouper& grouper) {
  last = !grouper.fill(reader, lines, storage, kLines, kBytes, &event_lines);
  streams.clear();
  origin_ms.clear();
  lines.mapped = false;  // the grouper's text is its own copy
  events = true;
  cut = grouper.take_cut();
}

void Batch::clear() {
  storage.clear();
  lines.spans.clear();
  lines.truncated.clear();
  lines.mapped = false;
  streams.clear();
  origin_ms.clear();
  events = false;
  cut = 0;
  last = false;
}

void Batch::add(const input::Line& line) {
  lines.spans.emplace_back(storage.size(), line.text.size());
  lines.truncated.push_back(line.truncated ? 1 : 0);
  storage.append(line.text).push_back('\n');
  // A container runtime's line: from the first one on, every line has its
  // stream (0 for the plain lines before it, and after it).
  if (line.stream != match::Stream::None || !streams.empty()) {
    streams.resize(lines.spans.size() - 1, 0);
    origin_ms.resize(lines.spans.size() - 1, 0);
    streams.push_back(static_cast<uint8_t>(line.stream));
    origin_ms.push_back(line.origin_ms);
  }
}

void Batch::done() { lines.text = storage; }

void fill_input(Batch& b, input::LineReader& reader, std::optional<input::EventGrouper>& grouper,
                input::EnvelopeFramer& framer, const config::MultilineSpec& spec, config::InputFormat format,
                bool own) {
  // With `multiline`, auto looks for no envelope: the grouper reads the
  // input from its first block on.
  const bool grouping = spec.kind != config::MultilineSpec::Kind::Off;
  framer.configure(grouping && format == config::InputFormat::Auto ? config::InputFormat::Text : format);
  if (!framer.plain()) {
    b.last = !framer.fill(reader, b.lines, b.storage, b.origin_ms, b.streams, Batch::kLines, Batch::kBytes, own);
    b.events = false;
    b.cut = 0;
    return;  // (an input found plain by this block is grouped from the next)
  }
  if (!grouper && spec.kind == config::MultilineSpec::Kind::Off) return b.fill(reader, own);
  if (!grouper) grouper.emplace(spec);
  else grouper->configure(spec);
  b.fill(reader, *grouper);
}

void Batch::match(match::Matcher* matcher, const match::LogTime* logtime, int64_t wall_ms) {
  const std::size_t n = size();
  if (results.size() < n) results.resize(n);
  if (matcher) {
    matcher->match_batch(lines.text, lines.spans, std::span<match::MatchResult>(results.data(), n), streams);
    invalid_json = matcher->take_invalid_json();
    repaired_json = matcher->take_repaired_json();
  } else {
    for (std::size_t i = 0; i < n; ++i) results[i].clear();
    invalid_json = 0;
    repaired_json = 0;
  }
  stamps.assign(n, kNoStamp);
  if (logtime && events) {
    // Continuation lines take the first line's time: its stamp alone is read.
    for (std::size_t i = 0; i < n; ++i) {
      // (A one-line event, the common case, has no "\n" to look for.)
      const std::string_view l = line(i);
      const std::string_view first = event_lines[i] > 1 ? l.substr(0, l.find('\n')) : l;
      if (auto t = logtime->parse(first, wall_ms)) stamps[i] = *t;
    }
  } else if (logtime && !streams.empty()) {
    // The envelope's time; a line that was no record reads its own.
    for (std::size_t i = 0; i < n; ++i) {
      if (streams[i] != 0) stamps[i] = origin_ms[i];
      else if (auto t = logtime->parse(line(i), wall_ms)) stamps[i] = *t;
    }
  } else if (logtime) {
    for (std::size_t i = 0; i < n; ++i)
      if (auto t = logtime->parse(line(i), wall_ms)) stamps[i] = *t;
  }
}

}  // namespace swthrottle::pipeline
