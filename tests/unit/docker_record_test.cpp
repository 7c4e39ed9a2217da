#include "input/docker_record.h"

#include <doctest/doctest.h>

#include <string>

#include "support/container_log.h"

namespace {

using swthrottle::input::EnvelopeRecord;
using swthrottle::input::read_docker;
using swthrottle::match::Stream;

constexpr int64_t k2026 = 1767225600000;  // 2026-01-01T00:00:00Z

TEST_CASE("docker record: dockerd's json-file, key by key") {
  struct Row {
    std::string line;
    bool ok;
    Stream stream;
    int64_t t;
    bool partial;
    std::string text;
  };
  const Row rows[] = {
      {R"({"log":"Log line is here\n","stream":"stdout","time":"2026-01-01T00:00:00.111111111Z"})", true,
       Stream::Stdout, k2026 + 111, false, "Log line is here"},
      {R"({"log":"half","stream":"stderr","time":"2026-01-01T00:00:00Z"})", true, Stream::Stderr, k2026, true, "half"},
      {R"({"log":"crlf\r\n","stream":"stdout","time":"2026-01-01T00:00:00Z"})", true, Stream::Stdout, k2026, false,
       "crlf"},
      {R"({"log":"\n","stream":"stdout","time":"2026-01-01T00:00:00Z"})", true, Stream::Stdout, k2026, false, ""},
      // Go's escapes: <, >, &, quotes, control bytes, surrogate pairs, a lone surrogate
      {R"({"log":"\u003ca href=\"x\"\u003e \u0026 \\ \t \ud83d\ude00 \ud800 \/\n","stream":"stdout","time":"2026-01-01T00:00:00Z"})",
       true, Stream::Stdout, k2026, false, "<a href=\"x\"> & \\ \t \xF0\x9F\x98\x80 \xEF\xBF\xBD /"},
      // --log-opt labels/env/tag: "attrs" before "time"
      {R"({"log":"{\"level\":\"error\"}\n","stream":"stderr","attrs":{"tag":"web","x":"}{\""},"time":"2026-01-01T00:00:01Z"})",
       true, Stream::Stderr, k2026 + 1000, false, R"({"level":"error"})"},
      // not records
      {R"({"log":"x\n","stream":"stdout"})", false, Stream::None, 0, false, ""},
      {R"({"log":"x\n","stream":"stdin","time":"2026-01-01T00:00:00Z"})", false, Stream::None, 0, false, ""},
      {R"({"log":"x\n","time":"2026-01-01T00:00:00Z"})", false, Stream::None, 0, false, ""},
      {R"({"log":"x\q","stream":"stdout","time":"2026-01-01T00:00:00Z"})", false, Stream::None, 0, false, ""},
      {R"({"log":"x\n","stream":"stdout","time":"2026-01-01T00:00:00Z"} )", false, Stream::None, 0, false, ""},
      {R"({"level":"info","msg":"a JSON log, not an envelope"})", false, Stream::None, 0, false, ""},
  };
  for (const Row& r : rows) {
    CAPTURE(r.line);
    EnvelopeRecord rec;
    std::string text = "kept:";
    REQUIRE(read_docker(r.line, rec, text) == r.ok);
    if (!r.ok) {
      CHECK(text == "kept:");  // nothing appended by a line that is not a record
      continue;
    }
    CHECK(rec.stream == r.stream);
    CHECK(rec.t_ms == r.t);
    CHECK(rec.partial == r.partial);
    CHECK(text == "kept:" + r.text);
  }
}

TEST_CASE("docker record: what the test writer writes reads back, split at 16 KiB") {
  std::string line = "<b>&\"quoted\" caf\xC3\xA9 \x01 ";
  line += std::string(20000, 'z');
  const std::string records = swthrottle::test::docker_record("stderr", line, k2026);
  std::string joined;
  int partials = 0;
  for (std::size_t at = 0; at < records.size();) {
    const std::size_t end = records.find('\n', at);
    EnvelopeRecord rec;
    REQUIRE(read_docker(std::string_view(records).substr(at, end - at), rec, joined));
    partials += rec.partial;
    at = end + 1;
  }
  CHECK(partials == 1);
  CHECK(joined == line);
}

}  // namespace
