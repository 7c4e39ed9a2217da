// The line reader over a mapped file (input/mapped_file.h): the same lines as
// read(2) gives, a file that grows or shrinks under the mapping, and the
// SIGBUS handler that stays out of the way of faults that are not its own.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "input/line_reader.h"
#include "input/mapped_file.h"
#include "support/temp_dir.h"
#include "support/text_files.h"

using swthrottle::input::LineReader;
using swthrottle::input::MappedFile;
using swthrottle::test::append_file;
using swthrottle::test::TempDir;

namespace {

using Lines = std::vector<std::pair<std::string, bool>>;  // text, truncated

int open_read(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  return fd;
}

void shrink_to(const std::string& path, off_t size) { REQUIRE(::truncate(path.c_str(), size) == 0); }

// Lines of every shape: CRLF, empty, NUL, one past max_line (1000), and an
// unterminated last line; over 1 MiB in all, so the reader maps the file.
std::string varied_text() {
  std::string s;
  for (int i = 0; s.size() < 3 * LineReader::kMapMin / 2; ++i) {
    s += "2026-11-21T10:00:00Z line " + std::to_string(i);
    if (i % 7 == 0) s += "\r";
    if (i % 11 == 0) s += std::string(1, '\0') + "nul";
    if (i % 97 == 0) s += std::string(1500 + i % 5, 'x');
    s += "\n";
    if (i % 13 == 0) s += "\n";
  }
  return s + "no newline at the end";
}

struct Read {
  Lines lines;
  bool any_mapped = false;
  std::string error;
};

// Every line through next_lines(), as the batch readers take them; the
// views are kept and copied only at the end when they are mapped (they must
// stay valid as long as the reader).
Read read_blocks(int fd, bool map) {
  LineReader r(fd, 1000, 1 << 16);
  r.sniff(nullptr, map);
  Read out;
  std::vector<std::pair<std::string_view, bool>> views;
  LineReader::Block b;
  auto keep_views = [&] {
    for (auto& v : views) out.lines.emplace_back(std::string(v.first), v.second);
    views.clear();
  };
  while (r.next_lines(b, 100, 4096)) {
    out.any_mapped |= b.mapped;
    if (!b.mapped) keep_views();  // the mapping comes first, then read(2) after it
    for (std::size_t i = 0; i < b.spans.size(); ++i) {
      const std::string_view text = b.text.substr(b.spans[i].first, b.spans[i].second);
      if (b.mapped) views.emplace_back(text, b.truncated[i] != 0);
      else out.lines.emplace_back(std::string(text), b.truncated[i] != 0);
    }
  }
  keep_views();
  out.error = r.error();
  return out;
}

}  // namespace

TEST_CASE("mapped reader: a mapped file gives the lines read(2) gives") {
  TempDir dir;
  const std::string f = dir.write("log", varied_text());
  const int a = open_read(f);
  const int b = open_read(f);
  const Read copied = read_blocks(a, false);
  const Read mapped = read_blocks(b, true);
  ::close(a);
  ::close(b);
  CHECK_FALSE(copied.any_mapped);
  CHECK(mapped.any_mapped);
  REQUIRE(copied.lines.size() > 10000);
  CHECK(mapped.lines == copied.lines);
  CHECK(mapped.error.empty());
  // The line past max_line is cut, and so marked, either way.
  bool cut = false;
  for (const auto& l : mapped.lines) cut |= l.second && l.first.size() == 1000;
  CHECK(cut);
  CHECK(mapped.lines.back().first == "no newline at the end");
}

TEST_CASE("mapped reader: a small file, or SWTHROTTLE_NO_MMAP's reader, is not mapped") {
  TempDir dir;
  const std::string small = dir.write("log", "a\nb\n");
  const int fd = open_read(small);
  const Read r = read_blocks(fd, true);
  ::close(fd);
  CHECK_FALSE(r.any_mapped);
  CHECK(r.lines == Lines{{"a", false}, {"b", false}});
}

TEST_CASE("mapped reader: the mapping starts where the descriptor stands") {
  // `(read first; swthrottle) < file`: the shell's read leaves the offset past the first line.
  std::string text = "skipped first line\n";
  for (int i = 0; text.size() < 2 * LineReader::kMapMin; ++i) text += "line " + std::to_string(i) + "\n";
  TempDir dir;
  const std::string f = dir.write("log", text);
  const int fd = open_read(f);
  REQUIRE(::lseek(fd, 19, SEEK_SET) == 19);
  const Read r = read_blocks(fd, true);
  ::close(fd);
  CHECK(r.any_mapped);
  REQUIRE_FALSE(r.lines.empty());
  CHECK(r.lines.front().first == "line 0");
}

TEST_CASE("mapped reader: a file that grows past its mapping is read to its new end") {
  std::string text;
  for (int i = 0; text.size() < 2 * LineReader::kMapMin; ++i) text += "line " + std::to_string(i) + "\n";
  const std::size_t whole = std::count(text.begin(), text.end(), '\n');
  TempDir dir;
  const std::string f = dir.write("log", text + "half a li");
  const int fd = open_read(f);
  LineReader r(fd, 1 << 20);
  r.sniff(nullptr, true);
  LineReader::Block b;
  REQUIRE(r.next_lines(b, 10, 1 << 20));
  CHECK(b.mapped);
  // Written after the mapping was made: read(2) picks it up after the mapping.
  append_file(f, "ne\nand one more\n");
  std::size_t n = b.spans.size();
  std::vector<std::string> tail;
  while (r.next_lines(b, 4096, 1 << 20)) {
    n += b.spans.size();
    for (const auto& s : b.spans) tail.emplace_back(b.text.substr(s.first, s.second));
    if (tail.size() > 3) tail.erase(tail.begin());
  }
  ::close(fd);
  CHECK(r.error().empty());
  CHECK(n == whole + 2);
  REQUIRE(tail.size() >= 2);
  CHECK(tail[tail.size() - 2] == "half a line");
  CHECK(tail.back() == "and one more");
}

TEST_CASE("mapped reader: a file that shrinks under the mapping ends the input with an error, not SIGBUS") {
  std::string text;
  for (int i = 0; text.size() < 4 * LineReader::kMapMin; ++i) text += "line " + std::to_string(i) + "\n";
  TempDir dir;
  const std::string f = dir.write("log", text);
  const int fd = open_read(f);
  LineReader r(fd, 1 << 20);
  r.sniff(nullptr, true);
  auto first = r.next();
  REQUIRE(first);
  CHECK(first->text == "line 0");
  // Cut to a page and a bit: the pages after it are gone from the mapping.
  const off_t kept = 4096 + 100;
  shrink_to(f, kept);
  std::size_t lines = 1, offset = first->text.size() + 1;
  bool intact = true;
  while (auto l = r.next()) {
    // What lies wholly before the new end is the file's own text.
    if (offset + l->text.size() < static_cast<std::size_t>(kept))
      intact &= text.compare(offset, l->text.size(), l->text) == 0;
    offset += l->text.size() + 1;
    ++lines;
  }
  ::close(fd);
  CHECK(intact);
  CHECK(lines < 300000);  // it stopped near the new end, not at the old one
  CHECK(r.error().find("shrank while it was read (to 4196 bytes)") != std::string::npos);
}

TEST_CASE("mapped reader: a SIGBUS outside every mapping still ends the process") {
  // The handler is installed with the first mapping; a fault it does not
  // own goes to the handler before it (a sanitizer's) or kills as before.
  std::string text(2 * LineReader::kMapMin, 'x');
  TempDir dir;
  const std::string f = dir.write("log", text);
  const int fd = open_read(f);
  std::string why;
  auto ours = MappedFile::map(fd, 0, text.size(), why);
  REQUIRE(ours);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    void* other = ::mmap(nullptr, text.size(), PROT_READ, MAP_PRIVATE, fd, 0);
    if (other == MAP_FAILED) ::_exit(3);
    shrink_to(f, 0);
    volatile char c = static_cast<const char*>(other)[text.size() - 1];
    (void)c;
    ::_exit(0);  // reached only if the fault was swallowed
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  ::close(fd);
  CHECK_FALSE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  CHECK_FALSE((WIFEXITED(status) && WEXITSTATUS(status) == 3));
}

namespace {

// The resident size of the mapping that holds `p`, from /proc/self/smaps.
std::size_t resident_kib(const void* p) {
  FILE* f = std::fopen("/proc/self/smaps", "r");
  REQUIRE(f != nullptr);
  char line[512];
  bool in = false;
  std::size_t kib = SIZE_MAX;
  const auto at = reinterpret_cast<uintptr_t>(p);
  while (std::fgets(line, sizeof line, f)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
      in = at >= lo && at < hi;
      continue;
    }
    std::size_t v = 0;
    if (in && std::sscanf(line, "Rss: %zu kB", &v) == 1) kib = v;
  }
  std::fclose(f);
  return kib;
}

}  // namespace

TEST_CASE("mapped reader: pages behind the reader are given back, and still read the same") {
  std::string text;
  for (int i = 0; text.size() < 40 * LineReader::kMapMin; ++i) text += "line " + std::to_string(i) + "\n";
  TempDir dir;
  const std::string f = dir.write("log", text);
  const int fd = open_read(f);
  LineReader r(fd, 1 << 20);
  r.sniff(nullptr, true);
  LineReader::Block b;
  std::string_view first;
  std::size_t lines = 0;
  while (r.next_lines(b, 2048, 1 << 20)) {
    REQUIRE(b.mapped);
    if (first.empty()) first = b.text;
    lines += b.spans.size();
  }
  CHECK(lines == static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')));
  // 40 MiB were read; what stays resident is what the reader keeps behind it.
  const std::size_t kib = resident_kib(first.data());
  CHECK(kib <= (LineReader::kKeepMapped + LineReader::kReleaseStep + (1 << 20)) / 1024);
  // The first block's view is still the file's text: it faults back in.
  CHECK(first == std::string_view(text).substr(0, first.size()));
  ::close(fd);
}
