// EnvelopeFields: the fields a container runtime's log gives each line
// besides its text (DESIGN.md §1 `format = "cri"` / "docker"): the stream
// the line was written to ({.stream}: "stdout" or "stderr") and the pod it
// came from, read from the file's path ({.k8s.namespace}, {.k8s.pod},
// {.k8s.container}; input/k8s_path.h).
//
// On a line of such an input these paths are the envelope's, never the
// payload's: a JSON payload with its own "stream" key cannot pass for the
// runtime's stream. A path the envelope does not know (a CRI file outside
// /var/log/pods) is absent. On a plain line (Stream::None) they are the
// payload's JSON fields, as any path.
//
// Not thread-safe: one per Matcher.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/rules.h"

namespace swthrottle::match {

// The stream of a line of a container runtime's log; None: a plain line.
enum class Stream : uint8_t { None = 0, Stdout = 1, Stderr = 2 };
constexpr std::string_view to_string(Stream s) {
  return s == Stream::Stdout ? "stdout" : s == Stream::Stderr ? "stderr" : "";
}

// The pod a container's log belongs to, as its path names it.
struct PodOrigin {
  std::string namespace_name, pod, container;  // "" when unknown
};

class EnvelopeFields {
 public:
  // The paths every envelope gives (dotted, as rules name them).
  static constexpr const auto& kPaths = config::kEnvelopePaths;

  // `json_paths`: the Matcher's JSON slots; those that are envelope paths
  // are answered here on lines with a stream.
  explicit EnvelopeFields(std::span<const std::string> json_paths);

  // The input's pod (kept until the next call).
  void set_origin(PodOrigin origin) { origin_ = std::move(origin); }
  // The current line's stream.
  void set_stream(Stream s) { stream_ = s; }
  Stream stream() const { return stream_; }

  enum class Answer { Payload, Absent, Value };
  // What slot `slot` holds on the current line: the payload's (Payload:
  // ask the JSON), nothing, or `*text`.
  Answer text(std::size_t slot, std::string_view* text) const;

 private:
  std::vector<int8_t> kind_;  // per JSON slot: -1, or the index into kPaths
  PodOrigin origin_;
  Stream stream_ = Stream::None;
};

}  // namespace swthrottle::match
