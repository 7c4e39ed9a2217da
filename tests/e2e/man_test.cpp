// The manual page and the bash and zsh completions against the program they
// describe: both linters are clean, every option `swthrottle --help` prints is in all three,
// every key the rules loader accepts is in the man page, and the completion
// function offers what it should.
//
// The key lists are read from src/config/rules.cpp (kSettingsKeys, kRuleKeys,
// kEventKeys) at test time, so a key added to the loader without a man page
// entry fails here.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/test_daemon.h"

namespace {

using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

const std::string kBinary = SWTHROTTLE_BINARY;
const std::string kSourceDir = SWTHROTTLE_SOURCE_DIR;
const std::string kManPage = kSourceDir + "/man/swthrottle.1";
const std::string kCompletion = kSourceDir + "/examples/swthrottle.bash-completion";
const std::string kZshCompletion = kSourceDir + "/examples/swthrottle.zsh-completion";

RunResult run(const std::vector<std::string>& argv) {
  RunResult r = swthrottle::test::run_process(argv, "");
  REQUIRE_MESSAGE(!r.timed_out, argv[0] << " did not finish in time");
  return r;
}

bool is_option_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

// Every "--name" token in `text` (roff's "\-" read as "-" first).
std::set<std::string> long_option_tokens(std::string text) {
  for (std::size_t at = text.find("\\-"); at != std::string::npos; at = text.find("\\-", at)) text.erase(at, 1);
  std::set<std::string> out;
  for (std::size_t i = 0; i + 2 < text.size(); ++i) {
    if (text.compare(i, 2, "--") != 0 || (i > 0 && is_option_char(text[i - 1]))) continue;
    std::size_t j = i + 2;
    if (!(text[j] >= 'a' && text[j] <= 'z')) continue;
    while (j < text.size() && is_option_char(text[j])) ++j;
    out.insert(text.substr(i, j - i));
    i = j - 1;
  }
  return out;
}

// The words of `text`: runs of letters, digits and '-'.
std::set<std::string> words(const std::string& text) {
  std::set<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    const bool word = is_option_char(text[i]) || (text[i] >= 'A' && text[i] <= 'Z');
    std::size_t j = i;
    while (j < text.size() && (is_option_char(text[j]) || (text[j] >= 'A' && text[j] <= 'Z'))) ++j;
    if (word) {
      out.insert(text.substr(i, j - i));
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

struct HelpOptions {
  std::vector<std::string> long_names;   // "--rule"
  std::vector<std::string> short_names;  // "-r"
};

// The options of `swthrottle --help`: the first word of every line that starts
// with '-' after its indentation ("-j,--threads INT:INT in [0 - 1024]").
// The options `swthrottle [SUBCOMMAND] --help` prints.
HelpOptions help_options(const char* subcommand = nullptr) {
  RunResult r = subcommand ? run({kBinary, subcommand, "--help"}) : run({kBinary, "--help"});
  REQUIRE(r.exit_status == 0);
  HelpOptions out;
  std::size_t start = 0;
  while (start < r.out.size()) {
    std::size_t end = r.out.find('\n', start);
    if (end == std::string::npos) end = r.out.size();
    std::string_view line(r.out.data() + start, end - start);
    start = end + 1;
    std::size_t b = line.find_first_not_of(' ');
    if (b == std::string_view::npos || b == 0 || line[b] != '-') continue;
    std::string_view word = line.substr(b, line.find(' ', b) - b);
    while (!word.empty()) {
      std::size_t comma = word.find(',');
      std::string_view name = word.substr(0, comma);
      if (name.starts_with("--")) {
        out.long_names.emplace_back(name);
      } else if (name.size() == 2 && name[0] == '-') {
        out.short_names.emplace_back(name);
      }
      word = comma == std::string_view::npos ? std::string_view() : word.substr(comma + 1);
    }
  }
  return out;
}

// The quoted strings of `const std::vector<std::string> NAME{...};` in rules.cpp.
std::vector<std::string> loader_keys(const std::string& source, const std::string& name) {
  std::vector<std::string> keys;
  const std::size_t decl = source.find(name + "{");
  if (decl == std::string::npos) return keys;
  const std::size_t end = source.find("};", decl);
  std::size_t i = decl;
  while (true) {
    std::size_t open = source.find('"', i);
    if (open == std::string::npos || open > end) break;
    std::size_t close = source.find('"', open + 1);
    keys.push_back(source.substr(open + 1, close - open - 1));
    i = close + 1;
  }
  return keys;
}

// The lines of the man page between the `.SS` line `heading` and the next
// `.SS` or `.SH`.
std::vector<std::string> subsection(const std::string& page, const std::string& heading) {
  std::vector<std::string> lines;
  const std::size_t at = page.find("\n" + heading + "\n");
  if (at == std::string::npos) return lines;
  std::size_t start = at + heading.size() + 2;
  while (start < page.size()) {
    std::size_t end = page.find('\n', start);
    if (end == std::string::npos) end = page.size();
    std::string line = page.substr(start, end - start);
    if (line.starts_with(".SS") || line.starts_with(".SH")) break;
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

// The tags of a subsection's `.TP` paragraphs: the line after each `.TP`.
std::set<std::string> tp_tags(const std::vector<std::string>& lines) {
  std::set<std::string> tags;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i] == ".TP") tags.insert(lines[i + 1]);
  }
  return tags;
}

// Runs the completion function as bash would for the words `words` (bash
// syntax, e.g. "swthrottle --fo") with the cursor on word `cword`, and returns
// COMPREPLY one per line.
std::string complete(const std::string& bash, const std::string& words, int cword) {
  const std::string script = "source '" + kCompletion + "'; COMP_WORDS=(" + words +
                             "); COMP_CWORD=" + std::to_string(cword) +
                             "; _swthrottle; printf '%s\\n' \"${COMPREPLY[@]}\"";
  RunResult r = run({bash, "--norc", "--noprofile", "-c", script});
  CHECK_MESSAGE(r.err == "", "bash: " << r.err);
  CHECK(r.exit_status == 0);
  return r.out == "\n" ? "" : r.out;  // printf prints one "\n" for an empty COMPREPLY
}

// The arguments of one line of an alternating-font macro (.BR, .IR, ...),
// as roff splits them: blanks separate them, "..." quotes one (a doubled
// quote inside is a quote); quoted() says which were quoted.
struct MacroArgs {
  std::vector<std::string> args;
  std::vector<bool> quoted;
};

MacroArgs macro_args(std::string_view s) {
  MacroArgs out;
  std::size_t i = 0;
  while (i < s.size()) {
    if (s[i] == ' ') {
      ++i;
      continue;
    }
    std::string a;
    const bool q = s[i] == '"';
    if (q) {
      ++i;
      for (; i < s.size(); ++i) {
        if (s[i] == '"' && i + 1 < s.size() && s[i + 1] == '"') {
          a += '"';
          ++i;
        } else if (s[i] == '"') {
          ++i;
          break;
        } else {
          a += s[i];
        }
      }
    } else {
      for (; i < s.size() && !(s[i] == ' ' && (i == 0 || s[i - 1] != '\\')); ++i) a += s[i];
    }
    out.args.push_back(std::move(a));
    out.quoted.push_back(q);
  }
  return out;
}

// A word of two or more letters that is not a placeholder in capitals (YYYY).
bool plain_word(const std::string& a) {
  if (a.size() < 2) return false;
  bool lower = false;
  for (char c : a) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return false;
    lower = lower || (c >= 'a' && c <= 'z');
  }
  return lower;
}

}  // namespace

TEST_CASE("man: the page is clean under groff and mandoc lint") {
  struct Linter {
    std::string program;
    std::vector<std::string> args;
  };
  const std::vector<Linter> linters{
      {"groff", {"-man", "-ww", "-z", kManPage}},
      {"mandoc", {"-T", "lint", kManPage}},
  };
  for (const Linter& l : linters) {
    CAPTURE(l.program);
    const std::string path = swthrottle::test::find_program({l.program});
    // .ci/setup installs both: a missing linter is a failure, not a skip.
    REQUIRE_MESSAGE(!path.empty(), l.program << " is not installed (apt-get install groff-base mandoc)");
    std::vector<std::string> argv{path};
    argv.insert(argv.end(), l.args.begin(), l.args.end());
    RunResult r = run(argv);
    CHECK(r.out == "");
    CHECK(r.err == "");
    CHECK(r.exit_status == 0);
  }
}

// .BR FLEET ) and one or more: an alternating-font macro joins its arguments
// without blanks, so the page read "FLEET)andoneormore". Neither groff -ww
// nor mandoc -T lint warns about it: two plain words side by side as
// arguments of such a macro are always that mistake.
TEST_CASE("man: no alternating-font macro glues words together") {
  const std::string page = swthrottle::test::read_file(kManPage);
  std::size_t line_no = 0;
  std::size_t at = 0;
  while (at < page.size()) {
    const std::size_t end = std::min(page.find('\n', at), page.size());
    const std::string_view line(page.data() + at, end - at);
    at = end + 1;
    ++line_no;
    static const std::vector<std::string_view> kMacros{".BR ", ".RB ", ".IR ", ".RI ", ".BI ", ".IB "};
    if (std::none_of(kMacros.begin(), kMacros.end(), [&](std::string_view m) { return line.starts_with(m); })) continue;
    const MacroArgs m = macro_args(line.substr(4));
    for (std::size_t i = 0; i + 1 < m.args.size(); ++i) {
      CAPTURE(line_no);
      CAPTURE(std::string(line));
      CHECK_FALSE((!m.quoted[i] && !m.quoted[i + 1] && plain_word(m.args[i]) && plain_word(m.args[i + 1])));
    }
  }
}

TEST_CASE("man: every option of --help is in the man page and the completion") {
  HelpOptions help = help_options();
  // `swthrottle backtest --help` too: the page and the completion cover both.
  const HelpOptions backtest = help_options("backtest");
  CHECK(std::find(backtest.long_names.begin(), backtest.long_names.end(), "--sweep") != backtest.long_names.end());
  for (const std::string& n : backtest.long_names)
    if (std::find(help.long_names.begin(), help.long_names.end(), n) == help.long_names.end())
      help.long_names.push_back(n);
  for (const std::string& n : backtest.short_names)
    if (std::find(help.short_names.begin(), help.short_names.end(), n) == help.short_names.end())
      help.short_names.push_back(n);
  // Guards the parsing of --help: the options DESIGN.md §6 lists are all there.
  for (const char* name : {"--rule", "--follow", "--from-start", "--time", "--mode", "--format", "--passthrough",
                           "--exec", "--exec-jobs", "--exec-timeout", "--state", "--threads", "--check", "--explain",
                           "--stats", "--exit-code", "--help", "--version", "--max-line"}) {
    CAPTURE(name);
    CHECK(std::find(help.long_names.begin(), help.long_names.end(), name) != help.long_names.end());
  }

  const std::string page = swthrottle::test::read_file(kManPage);
  const std::string completion = swthrottle::test::read_file(kCompletion);
  const std::string zsh = swthrottle::test::read_file(kZshCompletion);
  const std::set<std::string> in_page = long_option_tokens(page);
  const std::set<std::string> in_completion = long_option_tokens(completion);
  const std::set<std::string> in_zsh = long_option_tokens(zsh);
  for (const std::string& name : help.long_names) {
    CAPTURE(name);
    CHECK(in_page.count(name) == 1);
    CHECK(in_completion.count(name) == 1);
    CHECK(in_zsh.count(name) == 1);
    // The OPTIONS section has a paragraph for it, in roff: `\-\-name`.
    std::string roff;
    for (char c : name) roff += c == '-' ? std::string("\\-") : std::string(1, c);
    CHECK(page.find(roff) != std::string::npos);
  }
  // And the completions offer nothing the program does not have.
  for (const std::set<std::string>* offered : {&in_completion, &in_zsh}) {
    for (const std::string& name : *offered) {
      CAPTURE(name);
      CHECK(std::find(help.long_names.begin(), help.long_names.end(), name) != help.long_names.end());
    }
  }
  // Short options: in the page as the tag `\-f ", " \-\-follow`, and in the completion as a word.
  const std::set<std::string> completion_words = words(completion);
  const std::set<std::string> zsh_words = words(zsh);
  for (const std::string& name : help.short_names) {
    CAPTURE(name);
    CHECK(page.find("\\" + name + " \", \" \\-\\-") != std::string::npos);
    CHECK(completion_words.count(name) == 1);
    CHECK(zsh_words.count(name) == 1);
  }
}

TEST_CASE("man: every rules-file key the loader accepts is in the man page") {
  // The key lists of the loader, wherever in src/config/ they are defined.
  std::string rules_cpp;
  for (const char* f : {"settings_parser.h", "settings_parser.cpp", "rule_parser.h", "rule_parser.cpp",
                        "event_parser.h", "event_parser.cpp", "delivery_parser.h", "destination_parser.h"})
    rules_cpp += swthrottle::test::read_file(kSourceDir + "/src/config/" + f);
  const std::string page = swthrottle::test::read_file(kManPage);
  struct Table {
    std::string array;     // in src/config/
    std::string heading;   // the man page subsection whose .TP tags are the keys
    std::size_t at_least;  // guards the extraction: DESIGN.md §1 names this many
  };
  for (const Table& t : std::vector<Table>{{"kSettingsKeys", ".SS \"[settings]\"", 7},
                                           {"kRuleKeys", ".SS \"[[rule]]\"", 15},
                                           {"kEventKeys", ".SS \"[[rule.event]]\"", 2},
                                           {"kDeliveryKeys", ".SS \"[delivery]\"", 10},
                                           {"kDestinationKeys", ".SS \"[[delivery.destination]]\"", 8}}) {
    CAPTURE(t.array);
    const std::vector<std::string> keys = loader_keys(rules_cpp, t.array);
    CHECK(keys.size() >= t.at_least);
    const std::set<std::string> tags = tp_tags(subsection(page, t.heading));
    CHECK(!tags.empty());
    for (const std::string& key : keys) {
      CAPTURE(key);
      CHECK(tags.count(".B " + key) == 1);
    }
  }
  // The keys of a `timestamp = { ... }` table, in the Timestamps subsection.
  const std::vector<std::string> ts_keys = loader_keys(rules_cpp, "kTimestampKeys");
  CHECK(ts_keys.size() == 3);  // match, format, field
  std::string timestamps;
  for (const std::string& line : subsection(page, ".SS Timestamps")) timestamps += line + "\n";
  CHECK(timestamps.find("timestamp = {") != std::string::npos);
  for (const std::string& key : ts_keys) {
    CAPTURE(key);
    CHECK(timestamps.find(key + " = ") != std::string::npos);
  }
}

TEST_CASE("man: the bash completion offers options, values and files") {
  const std::string bash = swthrottle::test::find_program({"bash"});
  if (bash.empty()) {
    MESSAGE("bash is not installed: completion not tested");
    return;
  }
  TempDir dir;
  dir.write("rules.toml", "");
  dir.write("other.log", "");
  const std::string d = dir.path();
  struct Case {
    std::string words;
    int cword;
    std::string reply;
  };
  const std::vector<Case> cases{
      {"swthrottle --fo", 1, "--follow\n--format\n"},
      {"swthrottle --exec-t", 1, "--exec-timeout\n"},
      {"swthrottle -r rules.toml --fr", 3, "--from-start\n"},
      {"swthrottle --format ''", 2, "text\njson\n"},
      {"swthrottle --format j", 2, "json\n"},
      {"swthrottle --format = t", 3, "text\n"},  // "--format=t" as bash splits it by default
      {"swthrottle --format=j", 1, "--format=json\n"},
      {"swthrottle --time ''", 2, "arrival\nlog\n"},
      {"swthrottle --input j", 2, "json\njournal\n"},
      {"swthrottle --mode a", 2, "accurate\n"},
      {"swthrottle -r '" + d + "/r'", 2, d + "/rules.toml\n"},
      {"swthrottle --rule '" + d + "/r'", 2, d + "/rules.toml\n"},
      {"swthrottle --state '" + d + "/o'", 2, d + "/other.log\n"},
      {"swthrottle -r x.toml '" + d + "/o'", 3, d + "/other.log\n"},
      // Durations, sizes and numbers: nothing to offer.
      {"swthrottle --exec-timeout ''", 2, ""},
      {"swthrottle --exec-timeout 3", 2, ""},
      {"swthrottle --max-line ''", 2, ""},
      {"swthrottle -j ''", 2, ""},
      {"swthrottle --exec-jobs ''", 2, ""},
      {"swthrottle --nosuch", 1, ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.words);
    CHECK(complete(bash, c.words, c.cword) == c.reply);
  }
}

namespace {

// Is `line` one of the lines of `text`?
bool contains_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

// What the zsh completion hands to _arguments for the command line `words`
// (zsh syntax) with the cursor on word `current` (1-based, as zsh counts):
// _arguments is replaced by a function printing its arguments, one per line.
std::string zsh_specs(const std::string& zsh, const std::string& words, int current) {
  const std::string script = "words=(" + words + "); CURRENT=" + std::to_string(current) +
                             "; _arguments() { print -rl -- \"$@\"; }; source '" + kZshCompletion + "'";
  RunResult r = run({zsh, "-f", "-c", script});
  CHECK_MESSAGE(r.err == "", "zsh: " << r.err);
  CHECK(r.exit_status == 0);
  return r.out;
}

}  // namespace

TEST_CASE("man: the zsh completion offers the options of swthrottle, or of backtest after it") {
  const std::string zsh = swthrottle::test::find_program({"zsh"});
  REQUIRE_MESSAGE(!zsh.empty(), "zsh is not installed (.ci/setup installs it)");
  RunResult syntax = run({zsh, "-n", kZshCompletion});
  CHECK(syntax.err == "");
  CHECK(syntax.exit_status == 0);

  const std::string top = zsh_specs(zsh, "swthrottle --fo", 2);
  CHECK(contains_line(top,
                      "(-f --follow)--follow[keep reading files as they grow, like tail -F; a quoted glob "
                      "follows new files]"));
  CHECK(contains_line(top, "*--rule=[rules file or directory of *.toml files]:rules file or directory:_files"));
  CHECK(contains_line(top, "1::subcommand or log file:(backtest)"));  // the first word may be backtest
  CHECK(top.find("--sweep") == std::string::npos);

  const std::string later = zsh_specs(zsh, "swthrottle -r rules.toml ''", 4);
  CHECK(later.find("(backtest)") == std::string::npos);  // backtest only as the first word

  const std::string backtest = zsh_specs(zsh, "swthrottle backtest --sw", 3);
  CHECK(contains_line(backtest, "--sweep=[thresholds to try]:thresholds:(auto)"));
  CHECK(contains_line(backtest, "--time=[time source]:time:(log)"));
  CHECK(backtest.find("--follow") == std::string::npos);
  CHECK(backtest.find("(backtest)") == std::string::npos);
}
