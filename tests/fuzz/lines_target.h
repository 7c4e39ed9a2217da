// The whole line path, in-process, as the binary runs it: app::App with the
// generation app::load_generation makes from fixed rules (fixed_rules.h),
// fuzzed bytes as one input on a memfd, records into a collecting sink.
//
// Byte 0 picks: bit 0 the window mode (--mode efficient | accurate), bits
// 1-2 -j (1 to 4), bit 3 the time (the rules' log time, or --time arrival),
// bits 4-5 the input's name (which [[settings.input]] entry applies: plain
// text, java* multi-line, *.json structured, syslog* stamps), bit 6 the wall
// clock (2026-11-21T10:00:00Z, or a day later: the seeds' stamps are then
// trusted, not ahead of it). The rest is
// the input. With -j above 1 the same input is run again with -j 1: one
// input is decided in its own order whatever -j is, so both write the same.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/app.h"
#include "app/load_generation.h"
#include "fuzz/fixed_rules.h"
#include "fuzz/fuzz_check.h"
#include "support/collecting_sink.h"
#include "support/fake_clock.h"

namespace swthrottle::fuzz {

// A descriptor holding `size` bytes at `data`, read from its start; -1 on failure.
inline int memory_input(const uint8_t* data, std::size_t size) {
  const int fd = ::memfd_create("swthrottle_fuzz", MFD_CLOEXEC);
  if (fd < 0) return -1;
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) {
      ::close(fd);
      return -1;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::lseek(fd, 0, SEEK_SET) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// One run; what it wrote (records, rendered as text), and its exit status in `status`.
inline std::string run_lines(const cli::Options& o, const std::string& name, int64_t wall_ms, const uint8_t* data,
                             std::size_t size, int& status) {
  auto g = app::load_generation(o);
  FUZZ_CHECK(g.ok());
  test::CollectingSink sink;
  test::FakeClock clock(wall_ms);
  app::App app(o, {}, std::move(*g), sink, clock);
  FUZZ_CHECK(app.start());
  const int fd = memory_input(data, size);
  FUZZ_CHECK(fd >= 0);
  status = app.run({app::InputSpec{name, fd, false}});  // the App closes fd
  return sink.text();
}

inline void lines_one_input(const uint8_t* data, std::size_t size) {
  if (size < 1) return;
  static const char* const kNames[] = {"app.log", "java-app.log", "events.json", "syslog"};
  const uint8_t pick = data[0];
  cli::Options o;
  o.rule_files = {fixed_rules_path()};
  o.mode = pick & 1 ? config::Mode::Accurate : config::Mode::Efficient;
  o.threads = 1 + ((pick >> 1) & 3);
  if (pick & 8) o.time = config::TimeSource::Arrival;
  const std::string name = kNames[(pick >> 4) & 3];
  const int64_t wall_ms = pick & 64 ? 1'795'341'600'000 : 1'795'255'200'000;
  int status = -1;
  const std::string out = run_lines(o, name, wall_ms, data + 1, size - 1, status);
  // 2: an input error, e.g. bytes that start with gzip's or zstd's magic but
  // do not decompress (input/byte_source.h); never a crash.
  FUZZ_CHECK(status == 0 || status == 2);
  if (o.threads > 1) {
    o.threads = 1;
    int status1 = -1;
    const std::string out1 = run_lines(o, name, wall_ms, data + 1, size - 1, status1);
    FUZZ_CHECK(status1 == status);
    FUZZ_CHECK(out1 == out);
  }
}

}  // namespace swthrottle::fuzz
