#include "input/cri_record.h"

#include <doctest/doctest.h>

#include <string>

#include "support/container_log.h"

namespace {

using swthrottle::input::EnvelopeRecord;
using swthrottle::input::read_cri;
using swthrottle::match::Stream;

constexpr int64_t k2026 = 1767225600000;  // 2026-01-01T00:00:00Z

TEST_CASE("cri record: the kubelet's format, as containerd writes it") {
  struct Row {
    std::string line;
    bool ok;
    Stream stream;
    int64_t t;
    bool partial;
    std::string content;
  };
  const Row rows[] = {
      {"2026-01-01T00:00:00.123456789Z stderr F {\"level\":\"error\"}", true, Stream::Stderr, k2026 + 123, false,
       "{\"level\":\"error\"}"},
      {"2026-01-01T00:00:00Z stdout P first half", true, Stream::Stdout, k2026, true, "first half"},
      {"2026-01-01T01:00:00.5+01:00 stdout F x", true, Stream::Stdout, k2026 + 500, false, "x"},  // the node's zone
      {"2026-01-01T00:00:00Z stdout F ", true, Stream::Stdout, k2026, false, ""},                 // an empty line
      {"2026-01-01T00:00:00Z stdout F", true, Stream::Stdout, k2026, false, ""},
      {"2026-01-01T00:00:00Z stdout F:x:y  two spaces", true, Stream::Stdout, k2026, false, " two spaces"},
      {"2026-01-01T00:00:00Z stdout F a  b\tc ", true, Stream::Stdout, k2026, false, "a  b\tc "},
      // not records
      {"2026-01-01T00:00:00 stdout F no offset", false, Stream::None, 0, false, ""},
      {"2026-01-01T00:00:00Z stdin F x", false, Stream::None, 0, false, ""},
      {"2026-01-01T00:00:00Z stdout X x", false, Stream::None, 0, false, ""},
      {"2026-01-01T00:00:00Z stdout FF x", false, Stream::None, 0, false, ""},
      {"2026-13-01T00:00:00Z stdout F x", false, Stream::None, 0, false, ""},
      {"Jan  1 00:00:00 host sshd[1]: x", false, Stream::None, 0, false, ""},
      {"", false, Stream::None, 0, false, ""},
  };
  for (const Row& r : rows) {
    CAPTURE(r.line);
    EnvelopeRecord rec;
    std::string_view content;
    REQUIRE(read_cri(r.line, rec, content) == r.ok);
    if (!r.ok) continue;
    CHECK(rec.stream == r.stream);
    CHECK(rec.t_ms == r.t);
    CHECK(rec.partial == r.partial);
    CHECK(content == r.content);
  }
}

TEST_CASE("cri record: a line split at containerd's 16 KiB is P records and an F") {
  const std::string line(40000, 'a');
  const std::string records = swthrottle::test::cri_record("stdout", line, k2026);
  std::string joined;
  int partials = 0;
  for (std::size_t at = 0; at < records.size();) {
    const std::size_t end = records.find('\n', at);
    EnvelopeRecord rec;
    std::string_view content;
    REQUIRE(read_cri(std::string_view(records).substr(at, end - at), rec, content));
    partials += rec.partial;
    joined += content;
    at = end + 1;
  }
  CHECK(partials == 2);
  CHECK(joined == line);
}

}  // namespace
