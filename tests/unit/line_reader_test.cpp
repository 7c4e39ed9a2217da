#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "input/line_reader.h"

using swthrottle::input::Line;
using swthrottle::input::LineReader;

namespace {

using Lines = std::vector<std::pair<std::string, bool>>;  // text, truncated

Lines drain(LineReader& r) {
  Lines out;
  while (auto l = r.next()) out.emplace_back(std::string(l->text), l->truncated);
  return out;
}

// A temporary file, unlinked at once; fd() reads from the start, append() writes at the end.
class TempFile {
 public:
  explicit TempFile(std::string_view data = {}) {
    const char* dir = std::getenv("TMPDIR");
    std::string path = std::string(dir && *dir ? dir : "/tmp") + "/line_reader_test.XXXXXX";
    rfd_ = ::mkstemp(path.data());
    REQUIRE(rfd_ >= 0);
    wfd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    REQUIRE(wfd_ >= 0);
    ::unlink(path.c_str());
    append(data);
  }
  ~TempFile() {
    ::close(rfd_);
    ::close(wfd_);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  int fd() const { return rfd_; }
  void append(std::string_view data) const {
    while (!data.empty()) {
      const ssize_t n = ::write(wfd_, data.data(), data.size());
      REQUIRE(n > 0);
      data.remove_prefix(static_cast<std::size_t>(n));
    }
  }

 private:
  int rfd_ = -1;
  int wfd_ = -1;
};

Lines from_file(std::string_view data, std::size_t max_line, std::size_t buffer_size) {
  TempFile f(data);
  LineReader r(f.fd(), max_line, buffer_size);
  Lines got = drain(r);
  CHECK(r.error().empty());
  CHECK(r.at_eof());
  return got;
}

// Feeds `data` through a pipe in writes of `chunk` bytes from another thread,
// so that reads see arbitrary partial lines.
Lines from_pipe(const std::string& data, std::size_t max_line, std::size_t buffer_size, std::size_t chunk,
                std::size_t* capacity = nullptr) {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  std::thread writer([&] {
    std::size_t at = 0;
    while (at < data.size()) {
      const ssize_t n = ::write(fds[1], data.data() + at, std::min(chunk, data.size() - at));
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    ::close(fds[1]);
  });
  LineReader r(fds[0], max_line, buffer_size);
  Lines got = drain(r);
  writer.join();
  ::close(fds[0]);
  CHECK(r.error().empty());
  if (capacity) *capacity = r.capacity();
  return got;
}

// The rules of DESIGN.md §4 and §7, written out plainly: split at "\n", drop a
// "\r" right before it, cut to max_line.
Lines reference(std::string_view data, std::size_t max_line) {
  Lines out;
  std::size_t pos = 0;
  while (pos < data.size()) {
    const std::size_t nl = data.find('\n', pos);
    std::string raw;
    if (nl == std::string_view::npos) {
      raw = std::string(data.substr(pos));
      pos = data.size();
    } else {
      raw = std::string(data.substr(pos, nl - pos));
      pos = nl + 1;
      if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    }
    const bool truncated = raw.size() > max_line;
    if (truncated) raw.resize(max_line);
    out.emplace_back(std::move(raw), truncated);
  }
  return out;
}

}  // namespace

TEST_CASE("line_reader: line endings, empty lines, NUL") {
  using namespace std::literals;
  struct {
    std::string_view in;
    Lines want;
  } cases[] = {
      {""sv, {}},
      {"\n"sv, {{"", false}}},
      {"\n\n"sv, {{"", false}, {"", false}}},
      {"a"sv, {{"a", false}}},
      {"a\nb\n"sv, {{"a", false}, {"b", false}}},
      {"a\n\nb"sv, {{"a", false}, {"", false}, {"b", false}}},
      {"a\r\nb\r\n"sv, {{"a", false}, {"b", false}}},
      {"\r\n"sv, {{"", false}}},
      {"a\rb\n"sv, {{"a\rb", false}}},  // a lone CR stays
      {"a\r\r\n"sv, {{"a\r", false}}},  // only the CR right before LF goes
      {"a\r"sv, {{"a\r", false}}},      // no LF at the end: the CR stays
      {"\r"sv, {{"\r", false}}},
      {"a\0b\n\0\n"sv, {{"a\0b"s, false}, {"\0"s, false}}},
      {"x\ny"sv, {{"x", false}, {"y", false}}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.in);
    CHECK(from_file(c.in, 100, 64) == c.want);
    CHECK(from_file(c.in, 100, 1) == c.want);
    CHECK(from_pipe(std::string(c.in), 100, 64, 1) == c.want);
  }
}

TEST_CASE("line_reader: lines at and past max_line") {
  using namespace std::string_view_literals;
  struct {
    std::string_view in;
    Lines want;
  } cases[] = {
      {"abcd\n"sv, {{"abcd", false}}},
      {"abcd"sv, {{"abcd", false}}},
      {"abcd\r\n"sv, {{"abcd", false}}},  // the CR of CRLF does not count
      {"abcde\n"sv, {{"abcd", true}}},
      {"abcde"sv, {{"abcd", true}}},
      {"abcde\r\n"sv, {{"abcd", true}}},
      {"abcd\r"sv, {{"abcd", true}}},  // a lone CR at the end does count
      {"abcd\rx\n"sv, {{"abcd", true}}},
      {"abcdefghijklmnop\nxy\n"sv, {{"abcd", true}, {"xy", false}}},
      {"abcdefghijklmnop\r\nxy"sv, {{"abcd", true}, {"xy", false}}},
      {"abc\nabcdefghij\nabcd\nabcdefghij"sv, {{"abc", false}, {"abcd", true}, {"abcd", false}, {"abcd", true}}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.in);
    for (std::size_t buffer : {1, 3, 5, 6, 7, 64}) {
      CAPTURE(buffer);
      CHECK(from_file(c.in, 4, buffer) == c.want);
      CHECK(from_pipe(std::string(c.in), 4, buffer, 1) == c.want);
    }
  }
}

TEST_CASE("line_reader: every buffer size and max_line agrees with the plain rules") {
  const std::string data = "one\ntwo\r\n\nthree three\r\r\n\r\nfour\rfour\n" + std::string(37, 'L') + "\n" +
                           std::string(9, 'M') + "\r\n" + std::string("n\0ul\n", 5) + "x\ny\r\nlast without newline";
  for (std::size_t max_line = 0; max_line <= 12; ++max_line) {
    const Lines want = reference(data, max_line);
    for (std::size_t buffer = 1; buffer <= 20; ++buffer) {
      CAPTURE(max_line);
      CAPTURE(buffer);
      CHECK(from_file(data, max_line, buffer) == want);
    }
    CHECK(from_pipe(data, max_line, 4, 3) == want);
  }
  CHECK(from_file(data, 1000, 7) == reference(data, 1000));
}

TEST_CASE("line_reader: a 5 MiB line with max_line 1 MiB keeps memory bounded") {
  constexpr std::size_t kMiB = 1 << 20;
  const std::string data = std::string(5 * kMiB, 'x') + "\nshort\n" + std::string(5 * kMiB, 'y');
  const Lines want = {{std::string(kMiB, 'x'), true}, {"short", false}, {std::string(kMiB, 'y'), true}};

  {
    TempFile f(data);
    LineReader r(f.fd(), kMiB, 4096);
    CHECK(r.capacity() == 4096);
    CHECK(drain(r) == want);
    CHECK(r.capacity() >= kMiB);
    CHECK(r.capacity() <= kMiB + LineReader::kSlack);
    CHECK(r.capacity_limit() == kMiB + LineReader::kSlack);
  }
  std::size_t capacity = 0;
  CHECK(from_pipe(data, kMiB, 1 << 18, 65536, &capacity) == want);
  CHECK(capacity <= kMiB + LineReader::kSlack);
}

TEST_CASE("line_reader: short lines never grow the buffer") {
  std::string data;
  for (int i = 0; i < 2000; ++i) data += "line " + std::to_string(i) + "\n";
  TempFile f(data);
  LineReader r(f.fd(), 1 << 20, 64);
  const Lines got = drain(r);
  CHECK(got.size() == 2000);
  CHECK(got.back().first == "line 1999");
  CHECK(r.capacity() == 64);
}

TEST_CASE("line_reader: a buffer larger than max_line is not shrunk") {
  LineReader r(0, 10, 4096);
  CHECK(r.capacity() == 4096);
  CHECK(r.capacity_limit() == 4096);
}

TEST_CASE("line_reader: hold_partial keeps an unterminated line until its newline") {
  TempFile f("a\nb");
  LineReader r(f.fd(), 100, 16, /*hold_partial=*/true);
  auto l = r.next();
  REQUIRE(l);
  CHECK(l->text == "a");
  CHECK_FALSE(r.at_eof());

  CHECK_FALSE(r.next());  // "b" is held
  CHECK(r.at_eof());
  CHECK_FALSE(r.next());  // reads again, still nothing
  CHECK(r.at_eof());

  f.append("c\r");
  CHECK_FALSE(r.next());
  f.append("\nd");
  l = r.next();
  REQUIRE(l);
  CHECK(l->text == "bc");  // the CR came in one write and its LF in the next
  CHECK_FALSE(l->truncated);
  CHECK_FALSE(r.next());

  l = r.take_partial();
  REQUIRE(l);
  CHECK(l->text == "d");
  CHECK_FALSE(r.take_partial());
  CHECK_FALSE(r.next());
  CHECK(r.error().empty());
}

TEST_CASE("line_reader: hold_partial and long lines") {
  SUBCASE("a partial line known to be too long comes out at once") {
    TempFile f("abcdefg");  // 7 >= max_line + 2 bytes without a newline
    LineReader r(f.fd(), 4, 16, true);
    auto l = r.next();
    REQUIRE(l);
    CHECK(l->text == "abcd");
    CHECK(l->truncated);
    CHECK_FALSE(r.next());
    CHECK(r.at_eof());
    f.append("hij\nz\n");  // the rest of the long line is skipped
    l = r.next();
    REQUIRE(l);
    CHECK(l->text == "z");
    CHECK_FALSE(r.next());
    CHECK_FALSE(r.take_partial());
  }
  SUBCASE("the tail of a long line is not a partial line") {
    TempFile f("abcdefg");
    LineReader r(f.fd(), 4, 16, true);
    CHECK(r.next());
    CHECK_FALSE(r.next());
    CHECK_FALSE(r.take_partial());
  }
  SUBCASE("a held line that may still end in CRLF is decided by take_partial") {
    TempFile f("abcde");  // fewer than max_line + 2 bytes: the reader waits for more
    LineReader r(f.fd(), 4, 16, true);
    CHECK_FALSE(r.next());
    auto l = r.take_partial();
    REQUIRE(l);
    CHECK(l->text == "abcd");
    CHECK(l->truncated);
  }
  SUBCASE("exactly max_line plus CRLF arriving later is not truncated") {
    TempFile f("abcd\r");
    LineReader r(f.fd(), 4, 16, true);
    CHECK_FALSE(r.next());
    f.append("\n");
    auto l = r.next();
    REQUIRE(l);
    CHECK(l->text == "abcd");
    CHECK_FALSE(l->truncated);
  }
}

TEST_CASE("line_reader: without hold_partial end of input is final") {
  TempFile f("a\nb");
  LineReader r(f.fd(), 100, 16);
  CHECK(drain(r) == Lines{{"a", false}, {"b", false}});
  CHECK(r.at_eof());
  f.append("c\n");
  CHECK_FALSE(r.next());
  CHECK_FALSE(r.take_partial());
}

TEST_CASE("line_reader: reset continues on another descriptor and drops what was held") {
  TempFile one("x\npartial");
  TempFile two("y\n");
  LineReader r(one.fd(), 100, 16, true);
  CHECK(drain(r) == Lines{{"x", false}});
  r.reset(two.fd());
  CHECK_FALSE(r.at_eof());
  CHECK(drain(r) == Lines{{"y", false}});
  CHECK(r.at_eof());
  CHECK_FALSE(r.take_partial());
}

TEST_CASE("line_reader: a read error ends the input and is reported") {
  const int dir = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(dir >= 0);
  LineReader r(dir, 100, 16, true);
  CHECK_FALSE(r.next());
  CHECK_FALSE(r.at_eof());
  CHECK(r.error() == "Is a directory");
  CHECK_FALSE(r.next());
  ::close(dir);
}

TEST_CASE("line_reader: a non-blocking pipe is waited for, not taken for its end") {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0);
  REQUIRE(::fcntl(fds[1], F_SETFL, 0) == 0);
  const std::string data = std::string(200000, 'p') + "\nq\n";
  std::thread writer([&] {
    std::size_t at = 0;
    while (at < data.size()) {
      const ssize_t n = ::write(fds[1], data.data() + at, std::min<std::size_t>(1000, data.size() - at));
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    ::close(fds[1]);
  });
  LineReader r(fds[0], 1 << 20, 4096);
  const Lines got = drain(r);
  writer.join();
  ::close(fds[0]);
  CHECK(got == Lines{{std::string(200000, 'p'), false}, {"q", false}});
  CHECK(r.error().empty());
}

TEST_CASE("line_reader: a view stays valid until the next call") {
  TempFile f("first\nsecond\n");
  LineReader r(f.fd(), 100, 8);  // small: "second" needs a refill that moves bytes
  auto a = r.next();
  REQUIRE(a);
  const std::string first(a->text);
  CHECK(first == "first");
  auto b = r.next();
  REQUIRE(b);
  CHECK(b->text == "second");
}

TEST_CASE("line_reader: next_nowait() hands out buffered lines and never waits") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  swthrottle::input::LineReader r(fds[0], 1 << 20, 64);
  bool wait = false;
  CHECK_FALSE(r.next_nowait(wait));  // nothing written: next() would block
  CHECK(wait);
  REQUIRE(::write(fds[1], "one\ntw", 6) == 6);
  auto a = r.next_nowait(wait);
  REQUIRE(a);
  CHECK_FALSE(wait);
  CHECK(a->text == "one");
  CHECK_FALSE(r.next_nowait(wait));  // only "tw" so far: next() would wait for the rest
  CHECK(wait);
  REQUIRE(::write(fds[1], "o\nthree\n", 8) == 8);
  auto b = r.next_nowait(wait);  // "tw" was kept
  REQUIRE(b);
  CHECK(b->text == "two");
  auto c = r.next_nowait(wait);
  REQUIRE(c);
  CHECK(c->text == "three");
  CHECK_FALSE(r.next_nowait(wait));
  CHECK(wait);
  REQUIRE(::write(fds[1], "four", 4) == 4);
  ::close(fds[1]);
  auto d = r.next_nowait(wait);  // the end: the unterminated last line, at once
  REQUIRE(d);
  CHECK(d->text == "four");
  CHECK_FALSE(r.next_nowait(wait));
  CHECK_FALSE(wait);  // the end, not a wait
  ::close(fds[0]);
}

TEST_CASE("line_reader: next_nowait() returns a long line cut without waiting for its end") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  swthrottle::input::LineReader r(fds[0], 8, 64);
  REQUIRE(::write(fds[1], "0123456789abcdef", 16) == 16);  // no newline yet, already longer than 8
  bool wait = false;
  auto a = r.next_nowait(wait);
  REQUIRE(a);
  CHECK(a->text == "01234567");
  CHECK(a->truncated);
  CHECK_FALSE(r.next_nowait(wait));  // the rest of it is skipped; its end has not come
  CHECK(wait);
  REQUIRE(::write(fds[1], "gh\nnext\n", 8) == 8);
  auto b = r.next_nowait(wait);
  REQUIRE(b);
  CHECK(b->text == "next");
  ::close(fds[1]);
  ::close(fds[0]);
}
