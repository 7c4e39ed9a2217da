// EnvelopeFramer: container logs written as containerd and dockerd write
// them (tests/support/container_log.h), read back in batches of every size
// (a split line crosses fills) and line by line (a followed file): the same
// payload lines, streams and times either way.
#include "input/envelope_framer.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "fuzz/envelope_target.h"
#include "support/container_log.h"
#include "support/memory_file.h"

namespace {

namespace sw = swthrottle;
using sw::config::InputFormat;
using sw::input::EnvelopeFramer;
using sw::input::LineReader;
using sw::match::Stream;

constexpr int64_t k2026 = 1767225600000;  // 2026-01-01T00:00:00Z

struct Out {
  std::string text;
  bool truncated = false;
  Stream stream = Stream::None;
  int64_t t = 0;
  bool operator==(const Out&) const = default;
};
[[maybe_unused]] doctest::String toString(const Out& o) {
  return ("{" + std::to_string(o.text.size()) + " bytes \"" + o.text.substr(0, 40) + "\" " +
          std::to_string(static_cast<int>(o.stream)) + " " + std::to_string(o.t) + (o.truncated ? " cut}" : "}"))
      .c_str();
}

// Batch form, `per_fill` raw lines a fill.
std::vector<Out> by_batches(InputFormat f, const std::string& text, std::size_t per_fill, std::size_t max_line,
                            std::string* notice = nullptr) {
  const int fd = sw::test::memory_file(text);
  LineReader reader(fd, max_line + 64 * 1024);
  EnvelopeFramer framer(max_line);
  framer.configure(f);
  LineReader::Block block;
  std::string storage;
  std::vector<int64_t> origin;
  std::vector<uint8_t> streams;
  std::vector<Out> out;
  while (framer.fill(reader, block, storage, origin, streams, per_fill, 1 << 20, true)) {
    for (std::size_t i = 0; i < block.spans.size(); ++i) {
      Out o{std::string(block.text.substr(block.spans[i].first, block.spans[i].second)), block.truncated[i] != 0};
      if (!streams.empty()) {
        o.stream = static_cast<Stream>(streams[i]);
        o.t = origin[i];
      }
      out.push_back(o);
    }
  }
  if (notice)
    if (auto n = framer.take_notice()) *notice = *n;
  ::close(fd);
  return out;
}

// Line form, as a followed file is read.
std::vector<Out> by_lines(InputFormat f, const std::string& text, std::size_t max_line) {
  const int fd = sw::test::memory_file(text);
  LineReader reader(fd, max_line + 64 * 1024);
  EnvelopeFramer framer(max_line);
  framer.configure(f);
  std::vector<Out> out;
  auto keep = [&](const sw::input::Line& l) {
    out.push_back(Out{std::string(l.text), l.truncated, l.stream, l.origin_ms});
  };
  while (auto raw = reader.next())
    if (auto l = framer.add(*raw)) keep(*l);
  while (auto l = framer.flush()) keep(*l);
  ::close(fd);
  return out;
}

void check_all_ways(InputFormat f, const std::string& text, const std::vector<Out>& want,
                    std::size_t max_line = 1 << 20) {
  for (std::size_t per_fill : {1, 2, 3, 7, 2048}) {
    CAPTURE(per_fill);
    CHECK(by_batches(f, text, per_fill, max_line) == want);
  }
  CHECK(by_lines(f, text, max_line) == want);
}

std::string big(char c, std::size_t n) { return std::string(n, c); }

TEST_CASE("envelope framer: CRI as containerd writes it, lines split at 16 KiB joined per stream") {
  using sw::test::cri_record;
  const std::string long_out = "{\"level\":\"error\",\"msg\":\"" + big('o', 40000) + "\"}";
  const std::string long_err = "E " + big('e', 16384 - 2);  // exactly 16 KiB: one F record
  std::string log = cri_record("stdout", "started", k2026);
  // A stderr line comes between the records of a split stdout line.
  const std::string split = cri_record("stdout", long_out, k2026 + 1000);
  const std::size_t second = split.find('\n') + 1;
  log += split.substr(0, second) + cri_record("stderr", long_err, k2026 + 1500) + split.substr(second);
  log += cri_record("stderr", "", k2026 + 2000);                        // an empty line
  log += cri_record("stdout", "bye, no newline", k2026 + 3000, false);  // the container stopped mid-line
  check_all_ways(InputFormat::Cri, log,
                 {
                     {"started", false, Stream::Stdout, k2026},
                     {long_err, false, Stream::Stderr, k2026 + 1500},
                     {long_out, false, Stream::Stdout, k2026 + 1000},  // the time of its first record
                     {"", false, Stream::Stderr, k2026 + 2000},
                     {"bye, no newline", false, Stream::Stdout, k2026 + 3000},
                 });
  // auto finds the envelope by the first line.
  check_all_ways(InputFormat::Auto, log,
                 {
                     {"started", false, Stream::Stdout, k2026},
                     {long_err, false, Stream::Stderr, k2026 + 1500},
                     {long_out, false, Stream::Stdout, k2026 + 1000},
                     {"", false, Stream::Stderr, k2026 + 2000},
                     {"bye, no newline", false, Stream::Stdout, k2026 + 3000},
                 });
}

TEST_CASE("envelope framer: Docker json-file as dockerd writes it, partial lines joined") {
  using sw::test::docker_record;
  const std::string long_err = "{\"level\":\"error\",\"msg\":\"<" + big('x', 50000) + ">\"}";
  std::string log = docker_record("stdout", "GET / 200 & more", k2026);
  const std::string split = docker_record("stderr", long_err, k2026 + 10);
  const std::size_t second = split.find('\n') + 1;
  log += split.substr(0, second) + docker_record("stdout", "between", k2026 + 20) + split.substr(second);
  log += docker_record("stdout", "tagged", k2026 + 30, true, R"({"tag":"web"})");
  check_all_ways(InputFormat::Docker, log,
                 {
                     {"GET / 200 & more", false, Stream::Stdout, k2026},
                     {"between", false, Stream::Stdout, k2026 + 20},
                     {long_err, false, Stream::Stderr, k2026 + 10},
                     {"tagged", false, Stream::Stdout, k2026 + 30},
                 });
  CHECK(by_batches(InputFormat::Auto, log, 3, 1 << 20).size() == 4);
}

TEST_CASE("envelope framer: a joined line longer than --max-line is cut and marked, its records still consumed") {
  using sw::test::cri_record;
  const std::string log = cri_record("stdout", big('a', 40000), k2026) + cri_record("stdout", "next", k2026 + 1);
  check_all_ways(InputFormat::Cri, log,
                 {
                     {big('a', 20000), true, Stream::Stdout, k2026},
                     {"next", false, Stream::Stdout, k2026 + 1},
                 },
                 20000);
}

TEST_CASE("envelope framer: a line that is no record is read whole as a plain line, and said once") {
  using sw::test::cri_record;
  const std::string log = cri_record("stdout", "one", k2026) + "garbage in the middle\n" +
                          cri_record("stdout", "two", k2026 + 1) + "more garbage\n";
  check_all_ways(InputFormat::Cri, log,
                 {
                     {"one", false, Stream::Stdout, k2026},
                     {"garbage in the middle", false, Stream::None, 0},
                     {"two", false, Stream::Stdout, k2026 + 1},
                     {"more garbage", false, Stream::None, 0},
                 });
  std::string notice;
  by_batches(InputFormat::Cri, log, 2048, 1 << 20, &notice);
  CHECK(notice ==
        "line 2 is not a CRI log record (TIME STREAM P|F TEXT): it and any other such line are read whole, as "
        "plain lines (e.g. \"garbage in the middle\")");
}

TEST_CASE("envelope framer: auto leaves a plain input as it is, even a JSON log or a stamped one") {
  for (const std::string& log : {std::string("2026-01-01T00:00:00Z INFO started\nnext\n"),
                                 std::string("{\"log\":\"x\",\"level\":\"info\"}\n"), std::string("\n\nplain\n")}) {
    CAPTURE(log);
    std::vector<Out> want;
    for (std::size_t at = 0; at < log.size();) {
      const std::size_t end = log.find('\n', at);
      want.push_back(Out{log.substr(at, end - at)});
      at = end + 1;
    }
    check_all_ways(InputFormat::Auto, log, want);
  }
}

// The envelope fuzz harness's property (batch form == line
// form) on logs written as the runtimes write them, split lines cut at a
// --max-line of 8 bytes, and a record in a batch of its own.
TEST_CASE("envelope framer: the fuzz harness's property holds on logs framed by batches and by lines alike") {
  const std::string cri =
      "2026-01-01T00:00:00Z stdout P abcdefghij\n2026-01-01T00:00:00Z stderr F x\n"
      "2026-01-01T00:00:01Z stdout F klmnop\nnot a record\n2026-01-01T00:00:02Z stdout P tail";
  const std::string docker =
      "{\"log\":\"half \\u003c\",\"stream\":\"stdout\",\"time\":\"2026-01-01T00:00:00Z\"}\n"
      "{\"log\":\"rest\\n\",\"stream\":\"stdout\",\"time\":\"2026-01-01T00:00:01Z\"}\n";
  for (const std::string& log : {cri, docker}) {
    for (const char sel : {'\0', '\1', '\2', '\374', '\375', '\376'}) {
      for (const char fill : {'\0', '\1', '\7'}) {
        const std::string input = std::string{sel, fill} + log;
        sw::fuzz::envelope_one_input(reinterpret_cast<const uint8_t*>(input.data()), input.size());
      }
    }
  }
}

}  // namespace
