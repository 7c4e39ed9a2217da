// End-to-end: compressed inputs (gzip, zstd) read like their plain text,
// from files and from standard input; their errors; --follow of one; the
// "looks binary" notice. The real binary, as a child process.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "support/compress.h"
#include "support/json.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::gzip_bytes;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;
using swthrottle::test::zstd_bytes;

const std::string kBinary = SWTHROTTLE_BINARY;
const std::string kSourceDir = SWTHROTTLE_SOURCE_DIR;
const std::string kRules = kSourceDir + "/examples/rules.toml";

RunResult swt(const std::vector<std::string>& args, const std::string& input = "") {
  return swthrottle::test::run_swthrottle(args, input);
}

std::string example_log() {
  RunResult cat = swthrottle::test::run_process({"/bin/cat", kSourceDir + "/examples/app.log"}, "");
  REQUIRE(cat.exit_status == 0);
  return cat.out;
}

}  // namespace

TEST_CASE("a .gz and a .zst file give exactly the records of the plain file, also on stdin and with -j") {
  TempDir dir;
  const std::string text = example_log();
  const std::string plain = dir.write("app.log", text);
  const std::string gz = dir.write("app.log.1.gz", gzip_bytes(text));
  const std::string zst = dir.write("app.log.1.zst", zstd_bytes(text));
  const RunResult want = swt({"-r", kRules, "--format", "json", "-j", "1", plain});
  REQUIRE(want.exit_status == 0);
  REQUIRE(!want.out.empty());
  for (const std::string j : {"1", "3"}) {
    CAPTURE(j);
    for (const std::string& f : {gz, zst}) {
      CAPTURE(f);
      const RunResult r = swt({"-r", kRules, "--format", "json", "-j", j, f});
      CHECK(r.exit_status == 0);
      CHECK(r.err == "");
      CHECK(r.out == want.out);
    }
    // Standard input: `cat app.log.1.gz | swthrottle ...`, also as "-".
    for (const std::string& bytes : {gzip_bytes(text), zstd_bytes(text)}) {
      const RunResult r = swt({"-r", kRules, "--format", "json", "-j", j}, bytes);
      CHECK(r.exit_status == 0);
      CHECK(r.err == "");
      CHECK(r.out == want.out);
      CHECK(swt({"-r", kRules, "--format", "json", "-j", j, "-"}, bytes).out == want.out);
    }
  }
  // The name does not matter: only the bytes do.
  const std::string named_plain = dir.write("plain.gz", text);
  CHECK(swt({"-r", kRules, "--format", "json", named_plain}).out == want.out);
}

TEST_CASE("concatenated members and frames are all read (cat a.gz b.gz)") {
  TempDir dir;
  const std::string text = example_log();
  const std::string half = text.substr(0, text.find('\n', text.size() / 2) + 1);
  const std::string rest = text.substr(half.size());
  const RunResult want = swt({"-r", kRules, "--format", "json", dir.write("app.log", text)});
  CHECK(swt({"-r", kRules, "--format", "json", dir.write("a.gz", gzip_bytes(half) + gzip_bytes(rest))}).out ==
        want.out);
  CHECK(swt({"-r", kRules, "--format", "json"}, zstd_bytes(half) + zstd_bytes(rest)).out == want.out);
}

TEST_CASE("a rotation set given oldest first: app.log.2.gz app.log.1.zst app.log") {
  // One key per file: what each input decides does not depend on the others
  // (several inputs are decided in parallel), and a window of an hour keeps
  // every file's events in it whatever order the inputs move "now" in.
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"(
[settings]
time = "log"
timezone = "UTC"

[[rule]]
name = "per-host"
kind = "alert"
threshold = "3 per 1h"
key = "{host}"
  [[rule.event]]
  name = "e"
  match = 'ERROR host=(?P<host>\w+)'
)");
  auto file_of = [](const std::string& host, int minute) {
    std::string s;
    for (int i = 0; i < 5; ++i)
      s += "2026-11-21T10:" + std::to_string(10 + minute) + ":0" + std::to_string(i) + "Z ERROR host=" + host + "\n";
    return s;
  };
  const std::string two = file_of("two", 0), one = file_of("one", 1), now = file_of("now", 2);
  const std::vector<std::string> compressed{dir.write("app.log.2.gz", gzip_bytes(two)),
                                            dir.write("app.log.1.zst", zstd_bytes(one)), dir.write("app.log", now)};
  const std::vector<std::string> plain{dir.write("p2", two), dir.write("p1", one), dir.write("p0", now)};
  auto keys = [&](const std::vector<std::string>& files) {
    std::vector<std::string> args{"-r", rules, "--format", "json"};
    args.insert(args.end(), files.begin(), files.end());
    const RunResult r = swt(args);
    CHECK(r.exit_status == 0);
    CHECK(r.err == "");
    std::vector<std::string> ks;
    std::size_t at = 0;
    while (at < r.out.size()) {
      const std::size_t nl = r.out.find('\n', at);
      const auto rec = swthrottle::test::parse_json(std::string_view(r.out).substr(at, nl - at));
      REQUIRE(rec.has_value());
      if (rec->value("type", "") == "alert") ks.push_back(rec->value("key", ""));
      at = nl == std::string::npos ? r.out.size() : nl + 1;
    }
    std::sort(ks.begin(), ks.end());
    return ks;
  };
  const auto got = keys(compressed);
  CHECK(got == std::vector<std::string>{"now", "one", "two"});
  CHECK(got == keys(plain));
}

TEST_CASE("a truncated .gz: the records of the readable part, the error, exit 2") {
  TempDir dir;
  const std::string text = example_log();
  const std::string cut_member = gzip_bytes("2026-11-21T10:09:00Z ERROR never read\n").substr(0, 6);
  const std::string f = dir.write("app.log.1.gz", gzip_bytes(text) + cut_member);
  const RunResult want = swt({"-r", kRules, "--format", "json", dir.write("app.log", text)});
  const RunResult r = swt({"-r", kRules, "--format", "json", f});
  CHECK(r.exit_status == 2);
  CHECK(r.out == want.out);
  CHECK(r.err == "swthrottle: " + f + ": truncated gzip input (unexpected end of file)\n");
  // On standard input, the same.
  const RunResult s = swt({"-r", kRules, "--format", "json"}, gzip_bytes(text) + cut_member);
  CHECK(s.exit_status == 2);
  CHECK(s.out == want.out);
  CHECK(s.err == "swthrottle: -: truncated gzip input (unexpected end of file)\n");
  // A corrupt zstd input.
  const RunResult z = swt({"-r", kRules, dir.write("bad.zst", zstd_bytes(text) + "\x28\xb5\x2f\xfd garbage")});
  CHECK(z.exit_status == 2);
  CHECK(z.err.find(": corrupt zstd data (") != std::string::npos);
}

TEST_CASE("--follow of a compressed file is an error that says why") {
  TempDir dir;
  const std::string f = dir.write("app.log.1.gz", gzip_bytes("a\n"));
  const RunResult r = swt({"-r", kRules, "--follow", f});
  CHECK(r.exit_status == 2);
  CHECK(r.out == "");
  CHECK(r.err == "swthrottle: " + f + ": compressed input (gzip) cannot be followed; read it without --follow\n");
  const std::string z = dir.write("app.log.1.zst", zstd_bytes("a\n"));
  const RunResult rz = swt({"-r", kRules, "-f", z});
  CHECK(rz.exit_status == 2);
  CHECK(rz.err == "swthrottle: " + z + ": compressed input (zstd) cannot be followed; read it without --follow\n");
}

TEST_CASE("an input that looks binary is reported once and still matched, UTF-8 and Latin-1 are not") {
  TempDir dir;
  const std::string text = example_log();
  const std::string bin = std::string("\0\1\2 core dump\n", 14) + text;
  const std::string f = dir.write("bin.log", bin);
  const RunResult want = swt({"-r", kRules, "--format", "json", dir.write("app.log", text)});
  const RunResult r = swt({"-r", kRules, "--format", "json", f});
  CHECK(r.exit_status == 0);
  CHECK(r.out == want.out);
  CHECK(r.err == "swthrottle: " + f + ": looks binary (a NUL byte in its first " + std::to_string(bin.size()) +
                     " bytes); its lines are read and matched as text\n");
  const std::string latin = dir.write("latin.log", "caf\xe9 na\xefve \xa9 2026\ncaf\xc3\xa9 \xe2\x9c\x93\n" + text);
  const RunResult l = swt({"-r", kRules, "--format", "json", latin});
  CHECK(l.err == "");
  CHECK(l.exit_status == 0);
}
