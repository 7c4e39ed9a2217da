// -r DIR: a rules directory stands for its *.toml files in name order
// (config/rules_dir.h), through load_rules.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "config/rules.h"
#include "config/rules_dir.h"
#include "support/temp_dir.h"

using swthrottle::config::expand_rules_paths;
using swthrottle::config::is_rules_file_name;
using swthrottle::config::load_rules;
using swthrottle::test::TempDir;

namespace {

std::string rule(const std::string& name) {
  return "[[rule]]\nname = \"" + name +
         "\"\nkind = \"alert\"\nthreshold = \"5 per 1m\"\n[[rule.event]]\nname = \"e\"\nmatch = 'x'\n";
}

std::vector<std::string> rule_names(const std::vector<std::string>& paths) {
  auto r = load_rules(paths);
  REQUIRE_MESSAGE(r.ok(), r.error().str());
  std::vector<std::string> names;
  for (const auto& x : r->rules) names.push_back(x.name);
  return names;
}

}  // namespace

TEST_CASE("rules dir: which directory entries are rules files") {
  CHECK(is_rules_file_name("sshd.toml"));
  CHECK(is_rules_file_name("10-web.toml"));
  CHECK(is_rules_file_name("x.toml"));
  CHECK_FALSE(is_rules_file_name(".toml"));               // nothing before the suffix, and hidden
  CHECK_FALSE(is_rules_file_name(".sshd.toml"));          // hidden (an editor's lock file: .#sshd.toml)
  CHECK_FALSE(is_rules_file_name("sshd.toml~"));          // an editor's backup
  CHECK_FALSE(is_rules_file_name("sshd.toml.dpkg-old"));  // dpkg's copy of a replaced conffile
  CHECK_FALSE(is_rules_file_name("sshd.toml.off"));
  CHECK_FALSE(is_rules_file_name("README"));
  CHECK_FALSE(is_rules_file_name("sshd.TOML"));
}

TEST_CASE("rules dir: the *.toml files in name order, byte by byte, other entries left out") {
  TempDir dir;
  REQUIRE(::mkdir(dir.file("d").c_str(), 0755) == 0);
  dir.write("d/20-b.toml", rule("b"));
  dir.write("d/10-a.toml", rule("a"));
  dir.write("d/B.toml", rule("upper"));  // 'B' (0x42) sorts after the digits
  dir.write("d/README", "not a rules file");
  dir.write("d/30-c.toml.dpkg-old", "not toml at all [[[");
  dir.write("d/.40-d.toml", "hidden [[[");
  REQUIRE(::mkdir(dir.file("d/50-e.toml").c_str(), 0755) == 0);  // a directory: left out
  REQUIRE(::symlink("10-a.toml", dir.file("d/60-link.toml").c_str()) == 0);

  const std::vector<std::string> given{dir.file("d")};
  auto paths = expand_rules_paths(given);
  REQUIRE_MESSAGE(paths.ok(), paths.error().str());
  CHECK(*paths == std::vector<std::string>{dir.file("d/10-a.toml"), dir.file("d/20-b.toml"), dir.file("d/60-link.toml"),
                                           dir.file("d/B.toml")});
  // The symlink reads 10-a.toml a second time: its rule name is a duplicate,
  // and the error names both files.
  auto r = load_rules(given);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().str() == dir.file("d/60-link.toml") + ":2:8: duplicate rule name \"a\" (first defined at " +
                               dir.file("d/10-a.toml") + ":2:8)");
}

TEST_CASE("rules dir: files and directories mixed, in the order given, a trailing slash is kept out of the names") {
  TempDir dir;
  REQUIRE(::mkdir(dir.file("d").c_str(), 0755) == 0);
  dir.write("d/b.toml", rule("b"));
  dir.write("d/a.toml", rule("a"));
  const std::string first = dir.write("first.toml", rule("first"));
  const std::string last = dir.write("last.toml", rule("last"));
  CHECK(rule_names({first, dir.file("d") + "/", last}) == std::vector<std::string>{"first", "a", "b", "last"});
  auto paths = expand_rules_paths(std::vector<std::string>{dir.file("d") + "/"});
  REQUIRE(paths.ok());
  CHECK(paths->front() == dir.file("d/a.toml"));
}

TEST_CASE("rules dir: errors name the file, and the directory when it holds none") {
  TempDir dir;
  REQUIRE(::mkdir(dir.file("d").c_str(), 0755) == 0);
  dir.write("d/README", "no rules here\n");

  auto empty = load_rules(std::vector<std::string>{dir.file("d")});
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().str() == dir.file("d") + ": no rules files (*.toml) in this directory");

  dir.write("d/a.toml", rule("a"));
  dir.write("d/b.toml",
            "[[rule]]\nname = \"b\"\nkind = \"alert\"\nthreshold = \"5 per 1q\"\n"
            "[[rule.event]]\nname = \"e\"\nmatch = 'x'\n");
  auto bad = load_rules(std::vector<std::string>{dir.file("d")});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().file == dir.file("d/b.toml"));
  CHECK_MESSAGE(bad.error().line == 4, bad.error().str());

  // A dangling symlink is kept, and fails with its own name.
  REQUIRE(::unlink(dir.file("d/b.toml").c_str()) == 0);
  REQUIRE(::symlink("gone.toml", dir.file("d/c.toml").c_str()) == 0);
  auto dangling = load_rules(std::vector<std::string>{dir.file("d")});
  REQUIRE_FALSE(dangling.ok());
  CHECK(dangling.error().str() == dir.file("d/c.toml") + ": cannot read rules file: No such file or directory");
}

TEST_CASE("rules dir: an unreadable directory is an error that names it") {
  if (::geteuid() == 0) {
    // root reads a directory whatever its mode: the case is the same as any
    // other opendir failure, which a missing directory cannot show (it is
    // not a directory, so it is read as a file and fails there).
    MESSAGE("running as root: mode 000 does not keep root out; checked as the file error instead");
    auto r = load_rules(std::vector<std::string>{"/nonexistent/rules.d"});
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().str() == "/nonexistent/rules.d: cannot read rules file: No such file or directory");
    return;
  }
  TempDir dir;
  REQUIRE(::mkdir(dir.file("d").c_str(), 0000) == 0);
  auto r = load_rules(std::vector<std::string>{dir.file("d")});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().str() == dir.file("d") + ": cannot read rules directory: Permission denied");
}
