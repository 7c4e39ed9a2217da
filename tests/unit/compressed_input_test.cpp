// Compressed inputs under LineReader (input/byte_source.h, gzip_source.h,
// zstd_source.h): recognised by magic bytes, decompressed, every member or
// frame of a concatenation read, errors after every readable line; and the
// "looks binary" notice of a sniffed input.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "input/byte_source.h"
#include "input/line_reader.h"
#include "support/compress.h"
#include "support/temp_dir.h"
#include "support/text_files.h"

using swthrottle::input::Compression;
using swthrottle::input::LineReader;
using swthrottle::test::gzip_bytes;
using swthrottle::test::lines_of;
using swthrottle::test::TempDir;
using swthrottle::test::zstd_bytes;

namespace {

struct Read {
  std::vector<std::string> lines;
  std::string error;
  std::vector<std::string> notices;
  Compression compression = Compression::None;
};

// Reads `bytes` from a file through a sniffing LineReader.
Read read_all(std::string_view bytes, std::size_t buffer_size = 1 << 18, std::size_t max_line = 1 << 20) {
  TempDir dir;
  const std::string path = dir.write("input", bytes);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  Read r;
  {
    LineReader reader(fd, max_line, buffer_size);
    reader.sniff([&r](const std::string& what) { r.notices.push_back(what); });
    while (auto l = reader.next()) r.lines.emplace_back(l->text);
    r.error = reader.error();
    r.compression = reader.compression();
  }
  ::close(fd);
  return r;
}

// The same through a pipe written in pieces of `piece` bytes (standard input
// cannot be rewound: the sniffed bytes must be kept).
Read read_pipe(const std::string& bytes, std::size_t piece) {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  std::thread writer([&] {
    for (std::size_t at = 0; at < bytes.size(); at += piece) {
      const std::string_view part = std::string_view(bytes).substr(at, piece);
      if (::write(p[1], part.data(), part.size()) != static_cast<ssize_t>(part.size())) break;
      std::this_thread::yield();
    }
    ::close(p[1]);
  });
  Read r;
  {
    LineReader reader(p[0], 1 << 20, 64);
    reader.sniff([&r](const std::string& what) { r.notices.push_back(what); });
    while (auto l = reader.next()) r.lines.emplace_back(l->text);
    r.error = reader.error();
    r.compression = reader.compression();
  }
  writer.join();
  ::close(p[0]);
  return r;
}

std::string numbered(int from, int to) {
  std::string s;
  for (int i = from; i < to; ++i) s += "2026-11-21T10:00:00Z ERROR line " + std::to_string(i) + "\n";
  return s;
}

}  // namespace

TEST_CASE("sniff_compression: magic bytes, not names") {
  using swthrottle::input::could_be_magic;
  using swthrottle::input::sniff_compression;
  CHECK(sniff_compression("\x1f\x8b\x08") == Compression::Gzip);
  CHECK(sniff_compression(std::string_view("\x28\xb5\x2f\xfd\x00", 5)) == Compression::Zstd);
  CHECK(sniff_compression("\x1f") == Compression::None);
  CHECK(sniff_compression("hello") == Compression::None);
  CHECK(sniff_compression("") == Compression::None);
  CHECK(could_be_magic("\x1f"));
  CHECK(could_be_magic("\x28\xb5"));
  CHECK(could_be_magic(""));
  CHECK_FALSE(could_be_magic("a"));
  CHECK_FALSE(could_be_magic("\x28\xb5\x2f\xfd"));
}

TEST_CASE("plain input is read as before: no decoder, no notice") {
  const std::string text = numbered(0, 100) + "caf\xc3\xa9 UTF-8 and Latin-1 caf\xe9 \x1f\n";
  const Read r = read_all(text);
  CHECK(r.compression == Compression::None);
  CHECK(r.lines == lines_of(text));
  CHECK(r.error.empty());
  CHECK(r.notices.empty());
}

TEST_CASE("gzip: the lines of the plain text, through small and large buffers") {
  const std::string text = numbered(0, 5000);
  for (std::size_t buffer : {std::size_t{16}, std::size_t{4096}, std::size_t{1} << 18}) {
    CAPTURE(buffer);
    const Read r = read_all(gzip_bytes(text), buffer);
    CHECK(r.compression == Compression::Gzip);
    CHECK(r.lines == lines_of(text));
    CHECK(r.error.empty());
    CHECK(r.notices.empty());
  }
}

TEST_CASE("zstd: the lines of the plain text, through small and large buffers") {
  const std::string text = numbered(0, 5000);
  for (std::size_t buffer : {std::size_t{16}, std::size_t{4096}, std::size_t{1} << 18}) {
    CAPTURE(buffer);
    const Read r = read_all(zstd_bytes(text), buffer);
    CHECK(r.compression == Compression::Zstd);
    CHECK(r.lines == lines_of(text));
    CHECK(r.error.empty());
  }
}

TEST_CASE("concatenated gzip members and zstd frames are all read, as zcat does") {
  const std::string a = numbered(0, 300), b = numbered(300, 301), c = numbered(301, 900);
  const Read g = read_all(gzip_bytes(a) + gzip_bytes(b) + gzip_bytes("") + gzip_bytes(c));
  CHECK(g.lines == lines_of(a + b + c));
  CHECK(g.error.empty());
  const Read z = read_all(zstd_bytes(a) + zstd_bytes(b) + zstd_bytes("") + zstd_bytes(c));
  CHECK(z.lines == lines_of(a + b + c));
  CHECK(z.error.empty());
}

TEST_CASE("a line split across members is one line, a last line without newline is a line") {
  const Read g = read_all(gzip_bytes("first ha") + gzip_bytes("lf\nlast"));
  CHECK(g.lines == std::vector<std::string>{"first half", "last"});
  const Read z = read_all(zstd_bytes("first ha") + zstd_bytes("lf\nlast"));
  CHECK(z.lines == std::vector<std::string>{"first half", "last"});
}

TEST_CASE("an empty compressed input has no lines and no error") {
  CHECK(read_all(gzip_bytes("")).lines.empty());
  CHECK(read_all(gzip_bytes("")).error.empty());
  CHECK(read_all(zstd_bytes("")).lines.empty());
  CHECK(read_all(zstd_bytes("")).error.empty());
}

TEST_CASE("through a pipe in small pieces: the sniffed bytes are kept") {
  const std::string text = numbered(0, 400);
  for (std::size_t piece : {std::size_t{1}, std::size_t{3}, std::size_t{1000}}) {
    CAPTURE(piece);
    const Read g = read_pipe(gzip_bytes(text), piece);
    CHECK(g.compression == Compression::Gzip);
    CHECK(g.lines == lines_of(text));
    CHECK(g.error.empty());
    const Read z = read_pipe(zstd_bytes(text), piece);
    CHECK(z.compression == Compression::Zstd);
    CHECK(z.lines == lines_of(text));
    CHECK(z.error.empty());
  }
  // A plain input that begins like a magic number is plain all the same.
  const Read p = read_pipe(
      "\x1f"
      "a\nb\n",
      1);
  CHECK(p.compression == Compression::None);
  CHECK(p.lines == std::vector<std::string>{"\x1f"
                                            "a",
                                            "b"});
}

TEST_CASE("truncated gzip: every whole member before the cut, then the error") {
  const std::string a = numbered(0, 200);
  const std::string second = gzip_bytes(numbered(200, 400));
  for (std::size_t keep : {std::size_t{1}, std::size_t{5}, std::size_t{12}}) {
    CAPTURE(keep);
    const Read r = read_all(gzip_bytes(a) + second.substr(0, keep));
    CHECK(r.lines == lines_of(a));
    CHECK(r.error ==
          (keep == 1 ? "trailing garbage after gzip data" : "truncated gzip input (unexpected end of file)"));
  }
  // Cut inside the data: what was decompressed comes first (the cut last line too, as any last line).
  const std::string whole = gzip_bytes(numbered(0, 2000));
  const Read r = read_all(whole.substr(0, whole.size() / 2));
  CHECK(r.error == "truncated gzip input (unexpected end of file)");
  REQUIRE(r.lines.size() > 10);
  const auto expect = lines_of(numbered(0, 2000));
  for (std::size_t i = 0; i + 1 < r.lines.size(); ++i) CHECK(r.lines[i] == expect[i]);
}

TEST_CASE("corrupt gzip and trailing garbage are errors") {
  std::string g = gzip_bytes(numbered(0, 2000));
  for (std::size_t i = 20; i < 60; ++i) g[i] = static_cast<char>(g[i] ^ 0x5a);
  const Read r = read_all(g);
  CHECK(r.error.rfind("corrupt gzip data (", 0) == 0);
  const Read t = read_all(gzip_bytes("a\nb\n") + "garbage\n");
  CHECK(t.lines == std::vector<std::string>{"a", "b"});
  CHECK(t.error == "trailing garbage after gzip data");
  // A bad checksum in the trailer.
  std::string c = gzip_bytes("a\n");
  c[c.size() - 5] = static_cast<char>(c[c.size() - 5] ^ 1);
  CHECK(read_all(c).error.rfind("corrupt gzip data (", 0) == 0);
}

TEST_CASE("truncated and corrupt zstd are errors after the readable lines") {
  const std::string a = numbered(0, 200);
  const std::string second = zstd_bytes(numbered(200, 400));
  for (std::size_t keep : {std::size_t{2}, std::size_t{4}, std::size_t{9}, second.size() - 1}) {
    CAPTURE(keep);
    const Read r = read_all(zstd_bytes(a) + second.substr(0, keep));
    CHECK(r.error.empty() == false);
    REQUIRE(r.lines.size() >= 200);
    for (std::size_t i = 0; i < 200; ++i) CHECK(r.lines[i] == lines_of(a)[i]);
  }
  CHECK(read_all(zstd_bytes(a) + second.substr(0, 9)).error == "truncated zstd input (unexpected end of file)");
  const Read t = read_all(zstd_bytes("a\n") + "garbage!");
  CHECK(t.lines == std::vector<std::string>{"a"});
  CHECK(t.error.rfind("corrupt zstd data (", 0) == 0);
}

TEST_CASE("long lines are cut in decompressed text as in plain text") {
  const std::string text = std::string(5000, 'x') + "\nshort\n";
  const Read r = read_all(gzip_bytes(text), 64, 100);
  CHECK(r.lines == std::vector<std::string>{std::string(100, 'x'), "short"});
}

TEST_CASE("an input with a NUL byte in its first block looks binary: reported once, still read") {
  const std::string text = std::string("a\0b\n", 4) + numbered(0, 10) + std::string("\0\n", 2);
  const Read r = read_all(text);
  CHECK(r.lines == lines_of(text));
  REQUIRE(r.notices.size() == 1);
  CHECK(r.notices[0] == "looks binary (a NUL byte in its first " + std::to_string(text.size()) +
                            " bytes); its lines are read and matched as text");
  const Read g = read_all(gzip_bytes(text));
  CHECK(g.lines == lines_of(text));
  REQUIRE(g.notices.size() == 1);
  CHECK(g.notices[0].find("gzip-decompressed") != std::string::npos);
  // A NUL after the first block is not looked for.
  const Read late = read_all(numbered(0, 10) + std::string("\0\n", 2), 64);
  CHECK(late.notices.empty());
}
