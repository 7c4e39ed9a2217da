// Container logs (input/envelope_framer.h and the records it reads): byte
// 0 picks the format (cri, docker or auto) and a small --max-line, byte 1
// how many raw lines a batch takes; the rest is the log. The batch form and
// the line form (a followed file) must give the same lines, streams, times
// and cuts, and no line longer than --max-line.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "input/envelope_framer.h"

namespace swthrottle::fuzz {

struct FramedLine {
  std::string text;
  bool truncated;
  uint8_t stream;
  int64_t origin_ms;
  bool operator==(const FramedLine&) const = default;
};

inline int envelope_memfd(std::string_view text) {
  const int fd = ::memfd_create("swthrottle_fuzz", MFD_CLOEXEC);
  FUZZ_CHECK(fd >= 0);
  FUZZ_CHECK(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  FUZZ_CHECK(::lseek(fd, 0, SEEK_SET) == 0);
  return fd;
}

inline void envelope_one_input(const uint8_t* data, std::size_t size) {
  if (size < 2) return;
  static const config::InputFormat kFormats[] = {config::InputFormat::Cri, config::InputFormat::Docker,
                                                 config::InputFormat::Auto};
  const config::InputFormat format = kFormats[(data[0] & 3) % 3];
  const std::size_t max_line = 8 + (data[0] >> 2) * 4;  // 8 .. 260 bytes
  const std::size_t per_fill = 1 + data[1] % 8;
  const std::string_view log(reinterpret_cast<const char*>(data) + 2, size - 2);

  std::vector<FramedLine> batches, lines;
  {
    const int fd = envelope_memfd(log);
    input::LineReader reader(fd, 4096);
    input::EnvelopeFramer framer(max_line);
    framer.configure(format);
    input::LineReader::Block block;
    std::string storage;
    std::vector<int64_t> origin;
    std::vector<uint8_t> streams;
    while (framer.fill(reader, block, storage, origin, streams, per_fill, 1 << 20, true)) {
      FUZZ_CHECK(streams.empty() || streams.size() == block.spans.size());
      for (std::size_t i = 0; i < block.spans.size(); ++i) {
        const bool enveloped = !streams.empty() && streams[i] != 0;
        batches.push_back(FramedLine{std::string(block.text.substr(block.spans[i].first, block.spans[i].second)),
                                     block.truncated[i] != 0, enveloped ? streams[i] : uint8_t{0},
                                     enveloped ? origin[i] : 0});
      }
    }
    ::close(fd);
  }
  {
    const int fd = envelope_memfd(log);
    input::LineReader reader(fd, 4096);
    input::EnvelopeFramer framer(max_line);
    framer.configure(format);
    auto keep = [&](const input::Line& l) {
      const bool enveloped = l.stream != match::Stream::None;
      lines.push_back(
          FramedLine{std::string(l.text), l.truncated, static_cast<uint8_t>(l.stream), enveloped ? l.origin_ms : 0});
    };
    while (auto raw = reader.next())
      if (auto l = framer.add(*raw)) keep(*l);
    while (auto l = framer.flush()) keep(*l);
    ::close(fd);
  }
  FUZZ_CHECK(batches == lines);
  for (const FramedLine& l : lines)
    if (l.stream != 0) FUZZ_CHECK(l.text.size() <= max_line);
}

}  // namespace swthrottle::fuzz
