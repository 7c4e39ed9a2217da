#include "input/cri_record.h"

#include "match/stamp_forms.h"

namespace swthrottle::input {

bool read_cri(std::string_view line, EnvelopeRecord& rec, std::string_view& content) {
  const std::size_t time_end = line.find(' ');
  if (time_end == std::string_view::npos) return false;
  const int64_t t = match::stamp::rfc3339_utc_ms(line.substr(0, time_end));
  if (t == match::stamp::kNoTime) return false;
  std::string_view rest = line.substr(time_end + 1);
  if (rest.starts_with("stdout ")) {
    rec.stream = match::Stream::Stdout;
  } else if (rest.starts_with("stderr ")) {
    rec.stream = match::Stream::Stderr;
  } else {
    return false;
  }
  rest.remove_prefix(7);
  // TAGS: the first is P or F; later ones (':'-separated) are for the future.
  if (rest.empty() || (rest[0] != 'P' && rest[0] != 'F')) return false;
  const std::size_t tags_end = rest.find(' ');
  if (tags_end == std::string_view::npos) {
    // "... stdout F" with nothing after the tag: an empty line, written by
    // a runtime that drops the trailing blank.
    if (rest.size() != 1) return false;
    content = {};
  } else {
    if (tags_end != 1 && rest[1] != ':') return false;
    content = rest.substr(tags_end + 1);
  }
  rec.partial = rest[0] == 'P';
  rec.t_ms = t;
  return true;
}

}  // namespace swthrottle::input
