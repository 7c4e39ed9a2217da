#include "match/envelope_fields.h"

namespace swthrottle::match {

EnvelopeFields::EnvelopeFields(std::span<const std::string> json_paths) {
  kind_.assign(json_paths.size(), -1);
  for (std::size_t s = 0; s < json_paths.size(); ++s)
    for (std::size_t k = 0; k < std::size(kPaths); ++k)
      if (json_paths[s] == kPaths[k]) kind_[s] = static_cast<int8_t>(k);
}

EnvelopeFields::Answer EnvelopeFields::text(std::size_t slot, std::string_view* text) const {
  if (stream_ == Stream::None || slot >= kind_.size() || kind_[slot] < 0) return Answer::Payload;
  switch (kind_[slot]) {
    case 0: *text = to_string(stream_); break;
    case 1: *text = origin_.namespace_name; break;
    case 2: *text = origin_.pod; break;
    default: *text = origin_.container; break;
  }
  return text->empty() ? Answer::Absent : Answer::Value;
}

}  // namespace swthrottle::match
