#include "pipeline/batch.h"

namespace swthrottle::pipeline {

void Batch::fill(input::LineReader& reader, bool own) {
  last = !reader.next_lines(lines, kLines, kBytes);
  if (own) {
    storage.assign(lines.text);
    lines.text = storage;
  }
}

void Batch::match(match::Matcher* matcher, const match::LogTime* logtime, int64_t wall_ms) {
  const std::size_t n = size();
  if (results.size() < n) results.resize(n);
  if (matcher) {
    matcher->match_batch(lines.text, lines.spans, std::span<match::MatchResult>(results.data(), n));
    invalid_json = matcher->take_invalid_json();
  } else {
    for (std::size_t i = 0; i < n; ++i) results[i].clear();
    invalid_json = 0;
  }
  stamps.assign(n, kNoStamp);
  if (logtime)
    for (std::size_t i = 0; i < n; ++i)
      if (auto t = logtime->parse(line(i), wall_ms)) stamps[i] = *t;
}

}  // namespace swthrottle::pipeline
