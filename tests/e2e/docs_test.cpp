// The pages a newcomer reads stay true: README.md, CONTRIBUTING.md,
// ARCHITECTURE.md and docs/*.md. The README fits in 20 KB and, with docs/,
// speaks for the project without issue numbers; every relative link names a
// file of the repository (and, for a Markdown file, one of its headings or
// anchors); no page links outside the repository; every `DESIGN.md §N` that
// the code and the tests cite is a section of docs/DESIGN.md; and the
// `$ ./build/swthrottle ...` commands the README and the guide show print
// exactly what they show.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "support/process.h"

namespace {

namespace fs = std::filesystem;
using swthrottle::test::lines_of;
using swthrottle::test::read_file;
using swthrottle::test::RunResult;

const std::string kSourceDir = SWTHROTTLE_SOURCE_DIR;
const std::string kBinary = SWTHROTTLE_BINARY;

// The pages, relative to the source directory.
std::vector<std::string> pages() {
  std::vector<std::string> out{"README.md", "CONTRIBUTING.md", "ARCHITECTURE.md"};
  for (const auto& e : fs::directory_iterator(kSourceDir + "/docs"))
    if (e.path().extension() == ".md") out.push_back("docs/" + e.path().filename().string());
  return out;
}

// The README and docs/: the pages that speak for the project alone.
std::vector<std::string> public_pages() {
  std::vector<std::string> out;
  for (const std::string& p : pages())
    if (p == "README.md" || p.rfind("docs/", 0) == 0) out.push_back(p);
  return out;
}

bool is_fence(std::string_view line) {
  const std::size_t at = line.find_first_not_of(' ');
  return at != std::string_view::npos && line.substr(at).rfind("```", 0) == 0;
}

// The prose of a page: its lines outside fenced code blocks, with inline code
// spans blanked, so that `[21/Nov/2026:10:00:00]` or `#7` in code is not read
// as a link or an issue.
std::vector<std::string> prose_lines(const std::string& text) {
  std::vector<std::string> out;
  bool fenced = false;
  for (std::string line : lines_of(text)) {
    if (is_fence(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    bool code = false;
    for (char& c : line) {
      if (c == '`') code = !code;
      if (code) c = ' ';
    }
    out.push_back(line);
  }
  return out;
}

// GitHub's anchor of a heading: lower case, spaces to '-', and only letters,
// digits, '-' and '_' kept (other bytes, non-ASCII ones included, dropped).
std::string slug(std::string_view heading) {
  std::string out;
  for (char c : heading) {
    if (c >= 'A' && c <= 'Z') out += static_cast<char>(c - 'A' + 'a');
    else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') out += c;
    else if (c == ' ') out += '-';
  }
  return out;
}

// The anchors a Markdown page has: its headings' and its `<a id="...">`s.
std::set<std::string> anchors(const std::string& text) {
  std::set<std::string> out;
  for (const std::string& line : prose_lines(text)) {
    if (line.rfind('#', 0) != 0) continue;
    const std::size_t start = line.find_first_not_of("# ");
    if (start != std::string::npos) out.insert(slug(line.substr(start)));
  }
  static const std::regex id(R"re(<a id="([^"]+)">)re");
  for (std::sregex_iterator it(text.begin(), text.end(), id), end; it != end; ++it) out.insert((*it)[1].str());
  return out;
}

struct Link {
  std::string page;
  std::string target;
};

std::vector<Link> links_of(const std::string& page) {
  static const std::regex link(R"(\]\(([^)\s]+)\))");
  std::vector<Link> out;
  for (const std::string& line : prose_lines(read_file(kSourceDir + "/" + page)))
    for (std::sregex_iterator it(line.begin(), line.end(), link), end; it != end; ++it)
      out.push_back({page, (*it)[1].str()});
  return out;
}

// The file a page's relative link names, from the source directory.
std::string resolve(const Link& l) {
  const std::string path = l.target.substr(0, l.target.find('#'));
  if (path.empty()) return l.page;
  const fs::path base = fs::path(l.page).parent_path();
  return (base / path).lexically_normal().string();
}

// One shown command of a fenced block and the lines shown after it.
struct Shown {
  std::string page;
  std::string command;  // after "$ "
  std::string output;   // the lines up to the next "$ " or the end of the block, each with "\n"
};

std::vector<Shown> shown_commands(const std::string& page) {
  std::vector<Shown> out;
  bool fenced = false;
  Shown* current = nullptr;
  for (const std::string& line : lines_of(read_file(kSourceDir + "/" + page))) {
    if (is_fence(line)) {
      fenced = !fenced;
      current = nullptr;
    } else if (fenced && line.rfind("$ ", 0) == 0) {
      current = &out.emplace_back(Shown{page, line.substr(2), ""});
    } else if (current != nullptr) {
      current->output += line + "\n";
    }
  }
  return out;
}

// The section numbers `DESIGN.md §...` cites in one file's text: "§8.3-8.7"
// gives 8.3 and 8.7, "§1-§3, §5" gives 1, 3 and 5.
std::set<std::string> cited_sections(const std::string& text) {
  static const std::regex cite(R"(DESIGN\.md (§[0-9][0-9.§, -]*))");
  static const std::regex number(R"([0-9]+(\.[0-9]+)?)");
  std::set<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), cite), end; it != end; ++it) {
    const std::string run = (*it)[1].str();
    for (std::sregex_iterator n(run.begin(), run.end(), number); n != end; ++n) out.insert(n->str());
  }
  return out;
}

}  // namespace

TEST_CASE("docs: README.md is at most 20 KB") {
  const std::string readme = read_file(kSourceDir + "/README.md");
  CHECK(readme.size() <= 20u * 1024u);
  CHECK(readme.size() > 1024u);  // and is the README, not an empty file
}

TEST_CASE("docs: the README and docs/ name no issue numbers") {
  static const std::regex issue(R"((^|[^A-Za-z])([Ii]ssues? *#?[0-9]+|#[0-9]+\b))");
  for (const std::string& page : public_pages()) {
    for (const std::string& line : prose_lines(read_file(kSourceDir + "/" + page))) {
      CAPTURE(page);
      CAPTURE(line);
      CHECK(!std::regex_search(line, issue));
    }
  }
}

TEST_CASE("docs: every relative link names a file of the repository, and an anchor of it") {
  std::size_t checked = 0;
  for (const std::string& page : pages()) {
    for (const Link& l : links_of(page)) {
      CAPTURE(l.page);
      CAPTURE(l.target);
      // No page links outside the repository: a scheme ("https:") is one.
      const std::size_t colon = l.target.find(':'), slash = l.target.find('/');
      CHECK((colon == std::string::npos || (slash != std::string::npos && slash < colon)));
      const std::string file = resolve(l);
      CHECK(fs::exists(kSourceDir + "/" + file));
      const std::size_t hash = l.target.find('#');
      if (hash != std::string::npos && fs::path(file).extension() == ".md" && fs::exists(kSourceDir + "/" + file))
        CHECK(anchors(read_file(kSourceDir + "/" + file)).count(l.target.substr(hash + 1)) == 1);
      ++checked;
    }
  }
  CHECK(checked >= 30);  // guards the parsing: the pages link to each other and to examples/
}

TEST_CASE("docs: every DESIGN.md section the code and the tests cite is a section of docs/DESIGN.md") {
  const std::set<std::string> have = anchors(read_file(kSourceDir + "/docs/DESIGN.md"));
  std::set<std::string> cited;
  for (const char* dir : {"src", "tests"}) {
    for (const auto& e : fs::recursive_directory_iterator(kSourceDir + "/" + dir)) {
      if (!e.is_regular_file() || e.path().filename() == "docs_test.cpp") continue;
      const std::string ext = e.path().extension().string();
      if (ext != ".h" && ext != ".cpp" && ext != ".sh" && ext != ".py") continue;
      for (const std::string& s : cited_sections(read_file(e.path().string()))) {
        CAPTURE(e.path().string());
        CAPTURE(s);
        CHECK(have.count("s" + s) == 1);
        cited.insert(s);
      }
    }
  }
  // Guards the parsing: the code cites every top-level section, and the fleet's.
  for (const char* s : {"1", "2", "3", "4", "5", "6", "7", "8.3", "8.12"}) {
    CAPTURE(s);
    CHECK(cited.count(s) == 1);
  }
}

TEST_CASE("docs: the commands the README and the guide show print what they show") {
  // Each "$ ./build/swthrottle ..." of a fenced block is run by bash from the
  // source directory (the guide uses <(...)), standard error with standard
  // output, and must print the lines shown after it. Left out: a command
  // sent to the background ("&": a live session), and an output shortened
  // with "...".
  int run = 0;
  for (const std::string page : {"README.md", "docs/GUIDE.md"}) {
    for (const Shown& s : shown_commands(page)) {
      const std::string binary = "./build/swthrottle ";
      if (s.command.rfind(binary, 0) != 0 || s.command.back() == '&' || s.output.find("...") != std::string::npos)
        continue;
      CAPTURE(s.page);
      CAPTURE(s.command);
      const std::string command = "'" + kBinary + "' " + s.command.substr(binary.size());
      std::string quoted = "'";
      for (char c : command) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      quoted += "'";
      const RunResult r = swthrottle::test::run_process(
          {"/bin/sh", "-c", "cd '" + kSourceDir + "' && exec bash -c " + quoted + " 2>&1"}, "");
      CHECK(!r.timed_out);
      CHECK(r.exit_status == 0);
      CHECK(r.out == s.output);
      ++run;
    }
  }
  CHECK(run >= 8);  // the README's tour and the guide's backtest session
}
