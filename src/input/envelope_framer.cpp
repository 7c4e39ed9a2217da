#include "input/envelope_framer.h"

#include <algorithm>
#include <utility>

#include "input/cri_record.h"
#include "input/docker_record.h"

namespace swthrottle::input {

void EnvelopeFramer::configure(config::InputFormat format) {
  if (format == format_ && kind_ != Kind::Undecided) return;
  if (format == format_ && format == config::InputFormat::Auto) return;  // still looking
  format_ = format;
  switch (format) {
    case config::InputFormat::Cri: kind_ = Kind::Cri; break;
    case config::InputFormat::Docker: kind_ = Kind::Docker; break;
    case config::InputFormat::Auto: kind_ = Kind::Undecided; break;
    default: kind_ = Kind::None; break;
  }
}

void EnvelopeFramer::sniff(std::string_view line) {
  EnvelopeRecord rec;
  std::string_view content;
  scratch_.clear();
  kind_ = read_cri(line, rec, content) ? Kind::Cri : read_docker(line, rec, scratch_) ? Kind::Docker : Kind::None;
}

void EnvelopeFramer::not_a_record(std::string_view raw) {
  if (not_records_++ > 0) return;
  notice_ = "line " + std::to_string(raw_lines_) + " is not a " +
            (kind_ == Kind::Cri ? "CRI log record (TIME STREAM P|F TEXT)" : "Docker json-file record") +
            ": it and any other such line are read whole, as plain lines (e.g. \"" + std::string(raw.substr(0, 60)) +
            (raw.size() > 60 ? "...\")" : "\")");
}

std::optional<std::string> EnvelopeFramer::take_notice() {
  if (noticed_ || not_records_ == 0) return std::nullopt;
  noticed_ = true;
  return notice_;
}

EnvelopeFramer::Emitted EnvelopeFramer::close(std::size_t s, std::string& storage) {
  Open& o = open_[s];
  Emitted e{storage.size(), o.text.size(), o.truncated, static_cast<match::Stream>(s + 1), o.origin_ms};
  storage.append(o.text).push_back('\n');
  o.text.clear();
  o.open = false;
  o.truncated = false;
  return e;
}

std::optional<EnvelopeFramer::Emitted> EnvelopeFramer::frame(std::string_view raw, bool truncated,
                                                             std::string& storage) {
  ++raw_lines_;
  EnvelopeRecord rec;
  const std::size_t at = storage.size();
  std::string_view content;
  bool ok = false;
  if (kind_ == Kind::Cri) {
    ok = read_cri(raw, rec, content);
  } else {
    ok = read_docker(raw, rec, storage);  // its text appended to storage
    if (ok) content = std::string_view(storage).substr(at);
  }
  if (!ok) {
    not_a_record(raw);
    storage.append(raw).push_back('\n');
    return Emitted{at, raw.size(), truncated, match::Stream::None, 0};
  }
  const std::size_t s = rec.stream == match::Stream::Stderr ? 1 : 0;
  Open& o = open_[s];
  if (!o.open && !rec.partial) {
    // The common case, a whole line in one record: straight into storage.
    std::size_t len = content.size();
    if (kind_ == Kind::Cri) storage.append(content);
    const bool cut = len > max_line_;
    if (cut) {
      storage.resize(at + max_line_);
      len = max_line_;
    }
    storage.push_back('\n');
    return Emitted{at, len, truncated || cut, rec.stream, rec.t_ms};
  }
  if (!o.open) {
    o.open = true;
    o.origin_ms = rec.t_ms;
  }
  const std::size_t room = max_line_ - std::min(max_line_, o.text.size());
  if (content.size() > room) o.truncated = true;
  o.text.append(content.substr(0, room));
  o.truncated = o.truncated || truncated;
  storage.resize(at);  // docker's text, now in the stream's line
  if (rec.partial) return std::nullopt;
  return close(s, storage);
}

bool EnvelopeFramer::fill(LineReader& reader, LineReader::Block& out, std::string& storage,
                          std::vector<int64_t>& origin_ms, std::vector<uint8_t>& streams, std::size_t max_lines,
                          std::size_t max_bytes, bool own) {
  out.spans.clear();
  out.truncated.clear();
  origin_ms.clear();
  streams.clear();
  storage.clear();
  const bool more = reader.next_lines(raw_, max_lines, max_bytes);
  if (kind_ == Kind::Undecided) {
    for (std::size_t i = 0; i < raw_.spans.size() && kind_ == Kind::Undecided; ++i)
      if (raw_.spans[i].second > 0) sniff(raw_.text.substr(raw_.spans[i].first, raw_.spans[i].second));
  }
  if (kind_ == Kind::None || kind_ == Kind::Undecided) {
    // Plain (or only empty lines so far): the block as read.
    std::swap(out.spans, raw_.spans);
    std::swap(out.truncated, raw_.truncated);
    out.mapped = raw_.mapped;
    out.text = raw_.text;
    if (own && !raw_.mapped) {
      storage.assign(raw_.text);
      out.text = storage;
    }
    return more;
  }
  auto push = [&](const Emitted& e) {
    out.spans.emplace_back(e.at, e.len);
    out.truncated.push_back(e.truncated ? 1 : 0);
    origin_ms.push_back(e.origin_ms);
    streams.push_back(static_cast<uint8_t>(e.stream));
  };
  for (std::size_t i = 0; i < raw_.spans.size(); ++i) {
    const std::string_view raw = raw_.text.substr(raw_.spans[i].first, raw_.spans[i].second);
    if (auto e = frame(raw, raw_.truncated[i] != 0, storage)) push(*e);
  }
  if (!more)
    for (std::size_t s = 0; s < 2; ++s)
      if (open_[s].open) push(close(s, storage));
  out.text = storage;
  out.mapped = false;
  return more || !out.spans.empty();
}

std::optional<Line> EnvelopeFramer::add(const Line& raw) {
  if (kind_ == Kind::Undecided && !raw.text.empty()) sniff(raw.text);
  if (kind_ == Kind::None || kind_ == Kind::Undecided) return raw;
  line_out_.clear();
  const auto e = frame(raw.text, raw.truncated, line_out_);
  if (!e) return std::nullopt;
  return Line{std::string_view(line_out_).substr(e->at, e->len), e->truncated, e->stream, e->origin_ms};
}

std::optional<Line> EnvelopeFramer::flush() {
  for (std::size_t s = 0; s < 2; ++s) {
    if (!open_[s].open) continue;
    line_out_.clear();
    const Emitted e = close(s, line_out_);
    return Line{std::string_view(line_out_).substr(e.at, e.len), e.truncated, e.stream, e.origin_ms};
  }
  return std::nullopt;
}

}  // namespace swthrottle::input
