#include "input/event_grouper.h"

#include <poll.h>
#include <re2/re2.h>

namespace swthrottle::input {
namespace {

using Kind = config::MultilineSpec::Kind;

// The Java preset, by hand rather than by RE2: it runs on every line of the
// input, and an RE2 search per line made grouping cost a third of the
// throughput (tests/bench/multiline.sh). What it accepts, as RE2 would say it:
//   ^\s+at |^\s*\.\.\. \d+ more|^\s+\.\.\. \d+ common frames omitted|
//   ^Caused by:|^\s+Suppressed: |
//   ^(?:[a-zA-Z_$][\w$]*\.)+[a-zA-Z_$][\w$]*(?:Exception|Error|Throwable)(?::|$)
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\r' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$'; }
bool is_ident(char c) { return is_ident_start(c) || is_digit(c); }

// "... N more" or "... N common frames omitted" at `s`.
bool elision(std::string_view s, bool indented) {
  if (!s.starts_with("... ")) return false;
  s.remove_prefix(4);
  std::size_t d = 0;
  while (d < s.size() && is_digit(s[d])) ++d;
  if (d == 0) return false;
  s.remove_prefix(d);
  return s.starts_with(" more") || (indented && s.starts_with(" common frames omitted"));
}

// A qualified exception class at the start of the line, then ':' or the end.
bool exception_line(std::string_view s) {
  std::size_t i = 0;
  std::size_t dots = 0;
  std::size_t segment = 0;  // where the current segment starts
  for (;;) {
    if (i >= s.size() || !is_ident_start(s[i])) return false;
    segment = i;
    while (i < s.size() && is_ident(s[i])) ++i;
    if (i < s.size() && s[i] == '.') {
      ++dots;
      ++i;
      continue;
    }
    break;
  }
  if (dots == 0 || (i < s.size() && s[i] != ':')) return false;
  const std::string_view last = s.substr(segment, i - segment);
  return last.ends_with("Exception") || last.ends_with("Error") || last.ends_with("Throwable");
}

bool java_continues(std::string_view line) {
  if (line.empty()) return false;
  std::size_t ws = 0;
  while (ws < line.size() && is_space(line[ws])) ++ws;
  const std::string_view rest = line.substr(ws);
  if (ws > 0) return rest.starts_with("at ") || rest.starts_with("Suppressed: ") || elision(rest, true);
  if (line[0] == '.') return elision(line, false);
  if (line.starts_with("Caused by:")) return true;
  return exception_line(line);
}

constexpr std::string_view kTraceback = "Traceback (most recent call last):";
constexpr std::string_view kDuring = "During handling of the above exception, another exception occurred:";
constexpr std::string_view kCause = "The above exception was the direct cause of the following exception:";

bool indented(std::string_view line) { return !line.empty() && (line[0] == ' ' || line[0] == '\t'); }

}  // namespace

EventGrouper::EventGrouper(const config::MultilineSpec& spec) { configure(spec); }
EventGrouper::~EventGrouper() = default;

void EventGrouper::configure(const config::MultilineSpec& spec) {
  // Sources call this for every batch with the spec of the rules in force:
  // the same spec (a generation's rules live until exit) compiles nothing.
  if (&spec == configured_) return;
  configured_ = &spec;
  kind_ = spec.kind;
  max_lines_ = spec.max_lines;
  max_bytes_ = static_cast<std::size_t>(spec.max_bytes);
  re_.reset();
  if (kind_ == Kind::Start || kind_ == Kind::Continue) {
    RE2::Options o;
    o.set_log_errors(false);
    o.set_never_capture(true);
    re_ = std::make_unique<RE2>(spec.pattern, o);
    // Checked at load (config/settings_parser.cpp); a pattern RE2 still
    // rejects here groups nothing rather than everything.
    if (!re_->ok()) kind_ = Kind::Off;
  }
}

bool EventGrouper::continues(std::string_view line) {
  switch (kind_) {
    case Kind::Off: return false;
    case Kind::Start: return !re_->Match(line, 0, line.size(), RE2::UNANCHORED, nullptr, 0);
    case Kind::Continue: return re_->Match(line, 0, line.size(), RE2::UNANCHORED, nullptr, 0);
    case Kind::Java: return java_continues(line);
    case Kind::Python: break;
  }
  // Python: a small state machine, since the line that ends a traceback
  // ("KeyError: 'x'") looks like any other line and belongs to it only
  // after the frames.
  if (line.starts_with(kTraceback)) {
    py_ = Py::InTrace;
    return true;
  }
  switch (py_) {
    case Py::InTrace:
      if (indented(line)) return true;
      if (line.empty()) break;
      py_ = Py::AfterException;
      return true;
    case Py::AfterException:
    case Py::Chain:
      // The empty lines around "During handling ..." belong to the chain;
      // so, unavoidably, does one empty line right after a traceback that
      // is not chained.
      if (line.empty() || line == kDuring || line == kCause) {
        py_ = Py::Chain;
        return true;
      }
      break;
    case Py::None: break;
  }
  py_ = Py::None;
  return false;
}

bool EventGrouper::joins(std::string_view line) {
  const bool cont = continues(line);
  if (!open_ || !cont) return false;
  if (open_lines_ + 1 > max_lines_ || open_bytes_ + 1 + line.size() > max_bytes_) {
    ++cut_;
    return false;
  }
  ++open_lines_;
  open_bytes_ += 1 + line.size();
  return true;
}

void EventGrouper::opened(std::size_t size, bool truncated) {
  open_ = true;
  open_truncated_ = truncated;
  open_lines_ = 1;
  open_bytes_ = size;
}

namespace {

// The block's lines, each followed by "\n" and nothing else: no "\r" dropped
// before a "\n", no line cut at --max-line.
bool plain_lines(const LineReader::Block& b) {
  const std::size_t n = b.spans.size();
  if (n == 0) return false;
  for (std::size_t i = 0; i < n; ++i) {
    if (b.truncated[i] != 0) return false;
    const std::size_t end = b.spans[i].first + b.spans[i].second;
    if (i + 1 < n ? b.spans[i + 1].first != end + 1 : end + 1 < b.text.size()) return false;
  }
  return true;
}

}  // namespace

bool EventGrouper::fill(LineReader& reader, LineReader::Block& out, std::string& storage, std::size_t max_lines,
                        std::size_t max_bytes, std::vector<uint32_t>* line_counts) {
  if (line_counts) line_counts->clear();
  out.spans.clear();
  out.truncated.clear();
  storage.clear();
  std::size_t open_at = 0;
  if (open_) storage.append(carry_);
  auto close = [&] {
    out.spans.emplace_back(open_at, storage.size() - open_at);
    out.truncated.push_back(open_truncated_ ? 1 : 0);
    if (line_counts) line_counts->push_back(static_cast<uint32_t>(open_lines_));
    storage.push_back('\n');
  };
  // A live pipe (`tail -F app.log | swthrottle`): the pending event may be
  // complete, with nothing after it for a while. With every buffered line
  // grouped, more is waited for at most kIdleMs; none came: the event is
  // decided now. A file is always readable, so this never waits there; a
  // decoder may hold text the descriptor does not show, so compressed input
  // is left alone.
  if (open_ && !reader.has_line() && reader.compression() == Compression::None) {
    pollfd p{reader.fd(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(kIdleMs)) == 0) {
      close();
      open_ = false;
      out.text = storage;
      return true;
    }
  }
  const bool more = reader.next_lines(raw_, max_lines, max_bytes);
  if (plain_lines(raw_)) {
    // The block's text is already its lines joined with "\n": it is copied
    // in one piece (after the carried event and its "\n") and the events are
    // only spans of it, which keeps grouping near the plain path's speed.
    std::size_t open_end = storage.size();  // the open event's end (a "\n" follows it)
    if (open_) storage.push_back('\n');
    const std::size_t base = storage.size();
    storage.append(raw_.text);
    if (storage.back() != '\n') storage.push_back('\n');  // the input's last line had none
    for (std::size_t i = 0; i < raw_.spans.size(); ++i) {
      const std::size_t at = base + raw_.spans[i].first, len = raw_.spans[i].second;
      if (joins(std::string_view(storage).substr(at, len))) {
        open_end = at + len;
        continue;
      }
      if (open_) {
        out.spans.emplace_back(open_at, open_end - open_at);
        out.truncated.push_back(open_truncated_ ? 1 : 0);
        if (line_counts) line_counts->push_back(static_cast<uint32_t>(open_lines_));
      }
      open_at = at;
      open_end = at + len;
      opened(len, false);
    }
    if (!more || !open_) {
      if (open_) {
        out.spans.emplace_back(open_at, open_end - open_at);
        out.truncated.push_back(open_truncated_ ? 1 : 0);
        if (line_counts) line_counts->push_back(static_cast<uint32_t>(open_lines_));
      }
      open_ = false;
      storage.resize(out.spans.empty() ? 0 : out.spans.back().first + out.spans.back().second + 1);
    } else {
      carry_.assign(storage, open_at, open_end - open_at);
      storage.resize(open_at);
    }
    out.text = storage;
    return more || !out.spans.empty();
  }
  for (std::size_t i = 0; i < raw_.spans.size(); ++i) {
    const std::string_view line = raw_.text.substr(raw_.spans[i].first, raw_.spans[i].second);
    const bool truncated = raw_.truncated[i] != 0;
    if (joins(line)) {
      storage.push_back('\n');
      storage.append(line);
      open_truncated_ = open_truncated_ || truncated;
      continue;
    }
    if (open_) close();
    open_at = storage.size();
    storage.append(line);
    opened(line.size(), truncated);
  }
  if (!more) {
    if (open_) close();
    open_ = false;
  } else if (open_) {
    carry_.assign(storage, open_at);
    storage.resize(open_at);
  }
  out.text = storage;
  return more || !out.spans.empty();
}

std::optional<Line> EventGrouper::add(const Line& line, int64_t now_ms) {
  last_ms_ = now_ms;
  if (joins(line.text)) {
    carry_.push_back('\n');
    carry_.append(line.text);
    open_truncated_ = open_truncated_ || line.truncated;
    return std::nullopt;
  }
  std::optional<Line> done = flush();
  // flush() moved the event to out_: carry_ is free for the new one.
  carry_.assign(line.text);
  opened(line.text.size(), line.truncated);
  return done;
}

std::optional<Line> EventGrouper::flush() {
  if (!open_) return std::nullopt;
  open_ = false;
  out_lines_ = open_lines_;
  out_.swap(carry_);
  return Line{out_, open_truncated_};
}

}  // namespace swthrottle::input
