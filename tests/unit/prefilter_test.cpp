// The literal prefilter (match/prefilter.h) and Matcher::match_batch, which
// uses it: a line the prefilter rules out must be a line RE2 finds nothing in,
// so match_batch with the prefilter gives exactly what it gives without.
#include "match/prefilter.h"

#include <doctest/doctest.h>
#include <re2/re2.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "config/rules.h"
#include "match/matcher.h"
#include "support/seed.h"

namespace {

using swthrottle::config::RuleSet;
using swthrottle::match::LineSpan;
using swthrottle::match::Matcher;
using swthrottle::match::MatchResult;
using swthrottle::match::Prefilter;

// One alert rule per pattern, in order; `ignore` for a rule when given.
std::string rules_toml(const std::vector<std::string>& patterns, const std::vector<std::string>& ignores = {}) {
  std::string t;
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    t += "[[rule]]\nname = \"r" + std::to_string(i) + "\"\nkind = \"alert\"\nthreshold = \"5 per 1m\"\n";
    if (i < ignores.size() && !ignores[i].empty()) t += "ignore = '''" + ignores[i] + "'''\n";
    t += "  [[rule.event]]\n  name = \"e\"\n  match = '''" + patterns[i] + "'''\n";
  }
  return t;
}

RuleSet load(const std::string& toml) {
  auto r = swthrottle::config::parse_rules(toml, "rules.toml");
  REQUIRE_MESSAGE(r, (r ? "" : r.error().str()) << "\n" << toml);
  return std::move(*r);
}

// A batch as the program builds it: each line followed by '\n'.
struct Batch {
  std::string text;
  std::vector<LineSpan> spans;
  explicit Batch(const std::vector<std::string>& lines) {
    for (const auto& l : lines) {
      spans.emplace_back(text.size(), l.size());
      text += l;
      text += '\n';
    }
  }
};

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, path);
  std::vector<std::string> lines;
  std::string l;
  while (std::getline(in, l)) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    lines.push_back(l);
  }
  return lines;
}

bool same(const MatchResult& a, const MatchResult& b) {
  if (a.hits.size() != b.hits.size() || a.captures != b.captures) return false;
  for (std::size_t i = 0; i < a.hits.size(); ++i) {
    if (a.hits[i].rule != b.hits[i].rule || a.hits[i].events != b.hits[i].events ||
        a.hits[i].first_capture != b.hits[i].first_capture) {
      return false;
    }
  }
  return true;
}

struct Compared {
  std::size_t lines = 0, hits = 0, ruled_out = 0, differ = 0;
  std::string first_difference;
};

// match_batch with and without the prefilter over `lines`, in batches of `per`.
Compared compare(const RuleSet& rules, const std::vector<std::string>& lines, std::size_t per = 256) {
  auto with = Matcher::make(rules, false, true);
  auto without = Matcher::make(rules, false, false);
  REQUIRE(with);
  REQUIRE(without);
  Prefilter pf = Prefilter::make(rules);
  Compared c;
  std::vector<MatchResult> a(per), b(per);
  std::vector<int32_t> verdict;
  for (std::size_t from = 0; from < lines.size(); from += per) {
    const std::vector<std::string> part(
        lines.begin() + static_cast<std::ptrdiff_t>(from),
        lines.begin() + static_cast<std::ptrdiff_t>(std::min(lines.size(), from + per)));
    const Batch batch(part);
    with->match_batch(batch.text, batch.spans, a);
    without->match_batch(batch.text, batch.spans, b);
    pf.scan(batch.text, batch.spans, verdict);
    for (std::size_t i = 0; i < part.size(); ++i) {
      ++c.lines;
      if (!b[i].hits.empty()) ++c.hits;
      if (verdict[i] == Prefilter::kNone) ++c.ruled_out;
      if (!same(a[i], b[i])) {
        if (c.differ++ == 0) c.first_difference = part[i];
      }
    }
  }
  return c;
}

TEST_CASE("prefilter: the literals are those every match must contain, lowercased") {
  const RuleSet rules = load(rules_toml({"ERROR .* timeout", "OutOfMemoryError", "sshd\\[[0-9]+\\]: Failed"}));
  const Prefilter pf = Prefilter::make(rules);
  REQUIRE(pf.active());
  CHECK(pf.reason().empty());
  std::vector<std::string> atoms = pf.atoms();
  std::sort(atoms.begin(), atoms.end());
  CHECK(atoms == std::vector<std::string>{" timeout", "]: failed", "error ", "outofmemoryerror", "sshd["});
}

TEST_CASE("prefilter: off, with the reason, where it could drop a match") {
  struct Case {
    std::vector<std::string> patterns;
    std::string reason;
  };
  const Case cases[] = {
      {{"OutOfMemoryError", "[0-9]+"}, "pattern '[0-9]+' has no literal of 3 bytes or more that every match contains"},
      {{"ab|cd"}, "pattern 'ab|cd' has no literal of 3 bytes or more that every match contains"},
      {{"disk full",
        "Fehler: Datei \xC3\xBC"
        "ber"},
       "literal 'fehler: datei \xC3\xBC"
       "ber' is not ASCII"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.reason);
    const Prefilter pf = Prefilter::make(load(rules_toml(c.patterns)));
    CHECK_FALSE(pf.active());
    CHECK(pf.reason() == c.reason);
    // Off means every line is a candidate.
    const Batch batch({"nothing here", "x"});
    std::vector<int32_t> verdict;
    Prefilter(Prefilter::make(load(rules_toml(c.patterns)))).scan(batch.text, batch.spans, verdict);
    CHECK(verdict == std::vector<int32_t>{Prefilter::kAll, Prefilter::kAll});
  }
  const Prefilter none = Prefilter::make(RuleSet{});
  CHECK_FALSE(none.active());
  CHECK(none.reason() == "no event patterns");
}

TEST_CASE("prefilter: verdicts per line") {
  Prefilter pf = Prefilter::make(load(rules_toml({"ERROR .* timeout", "OutOfMemoryError", "ERROR"})));
  REQUIRE(pf.active());
  const Batch batch({
      "2026-11-21 ERROR db timeout",  // 0: events 0 and 2
      "2026-11-21 INFO all fine",     // 1: no atom
      "ERROR a",                      // 2: "error " alone, but event 2 ("error") needs nothing more
      "java.lang.OutOfMemoryError",   // 3: event 1, and 2: "error" is in OutOfMemoryError, caselessly
      "na\xC3\xAFve timeout",         // 4: a byte >= 0x80: any event may match
      "x timeout then ERROR x",       // 5: both atoms, wrong order: a candidate all the same (RE2 decides)
      "outofmemoryerror",             // 6: atoms are caseless, the pattern is not: a candidate, RE2 decides
      "",                             // 7: empty
      "ERRO",                         // 8: cut before the atom
  });
  std::vector<int32_t> verdict;
  pf.scan(batch.text, batch.spans, verdict);
  REQUIRE(verdict.size() == 9);
  auto events = [&](std::size_t line) {
    REQUIRE(verdict[line] >= 0);
    const auto p = pf.potentials(verdict[line]);
    return std::vector<uint32_t>(p.begin(), p.end());
  };
  CHECK(events(0) == std::vector<uint32_t>{0, 2});
  CHECK(verdict[1] == Prefilter::kNone);
  CHECK(events(2) == std::vector<uint32_t>{2});
  CHECK(events(3) == std::vector<uint32_t>{1, 2});
  CHECK(verdict[4] == Prefilter::kAll);
  CHECK(events(5) == std::vector<uint32_t>{0, 2});
  CHECK(events(6) == std::vector<uint32_t>{1, 2});
  CHECK(verdict[7] == Prefilter::kNone);
  CHECK(verdict[8] == Prefilter::kNone);
}

TEST_CASE("prefilter: another() shares the compiled literals and scans alike, two threads at once") {
  const Prefilter pf = Prefilter::make(load(rules_toml({"ERROR .* timeout", "OutOfMemoryError", "disk full"})));
  REQUIRE(pf.active());
  std::vector<std::string> lines;
  for (int i = 0; i < 2000; ++i) {
    lines.push_back(i % 3 == 0   ? "ERROR db " + std::to_string(i) + " timeout"
                    : i % 3 == 1 ? "java.lang.OutOfMemoryError " + std::to_string(i)
                                 : "INFO fine " + std::to_string(i));
  }
  const Batch batch(lines);
  std::vector<int32_t> expected;
  Prefilter(pf.another()).scan(batch.text, batch.spans, expected);
  // Each thread's own Prefilter over the one database; the events it names
  // must be those of the original (the verdict numbers are per Prefilter).
  auto events_of = [&](const Prefilter& p, const std::vector<int32_t>& v) {
    std::vector<std::vector<uint32_t>> out;
    for (int32_t x : v) {
      if (x < 0) out.push_back({static_cast<uint32_t>(-x)});
      else out.emplace_back(p.potentials(x).begin(), p.potentials(x).end());
    }
    return out;
  };
  Prefilter reference = pf.another();
  std::vector<int32_t> ref_verdict;
  reference.scan(batch.text, batch.spans, ref_verdict);
  const auto want = events_of(reference, ref_verdict);
  CHECK(want[0] == std::vector<uint32_t>{0});
  CHECK(want[1] == std::vector<uint32_t>{1});
  CHECK(want[2] == std::vector<uint32_t>{static_cast<uint32_t>(-Prefilter::kNone)});
  std::vector<std::vector<std::vector<uint32_t>>> got(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      Prefilter mine = pf.another();
      std::vector<int32_t> v;
      for (int round = 0; round < 20; ++round) mine.scan(batch.text, batch.spans, v);
      got[static_cast<std::size_t>(t)] = events_of(mine, v);
    });
  }
  for (auto& th : threads) th.join();
  CHECK(got[0] == want);
  CHECK(got[1] == want);
  CHECK(pf.another().atoms() == pf.atoms());
}

TEST_CASE(
    "prefilter: Matchers made in threads at once from equal rule sets match alike, and a changed pattern gets its own "
    "compile") {
  // Two RuleSets parsed apart, equal in content: their Matchers share what
  // make() compiled (match/matcher.h), and each thread compiles its own RE2
  // objects as it needs them. A third with one pattern changed must not be
  // given the others' compile.
  const std::vector<std::string> patterns = {"Failed password for (?:invalid user )?\\S+ from (?P<ip>[0-9.]+)",
                                             "authentication failure", "Invalid user", "session opened"};
  const RuleSet a = load(rules_toml(patterns, {"", "root"}));
  const RuleSet b = load(rules_toml(patterns, {"", "root"}));
  std::vector<std::string> other = patterns;
  other[2] = "Received disconnect";
  const RuleSet c = load(rules_toml(other, {"", "root"}));
  std::vector<std::string> lines = read_lines(SWTHROTTLE_SOURCE_DIR "/tests/data/loghub/OpenSSH_2k.log");
  for (auto& l : read_lines(SWTHROTTLE_SOURCE_DIR "/tests/data/loghub/Linux_2k.log")) lines.push_back(l);
  lines.push_back("Invalid user j\xF6rg from 1.2.3.4");  // not UTF-8: the set's Latin-1 reading
  const Batch batch(lines);
  auto run = [&](const RuleSet& rules, bool prefilter) {
    auto m = Matcher::make(rules, false, prefilter);
    REQUIRE(m);
    std::vector<MatchResult> out(lines.size());
    m->match_batch(batch.text, batch.spans, out);
    return out;
  };
  const std::vector<MatchResult> plain = run(a, false);
  std::size_t hits = 0;
  for (const auto& r : plain) hits += r.hits.size();
  CHECK(hits > 500);
  std::vector<std::vector<MatchResult>> got(4);
  {
    std::vector<std::thread> threads;
    threads.emplace_back([&] { got[0] = run(a, true); });
    threads.emplace_back([&] { got[1] = run(b, true); });
    threads.emplace_back([&] { got[2] = run(b, false); });
    threads.emplace_back([&] { got[3] = run(c, true); });
    for (auto& th : threads) th.join();
  }
  std::size_t differ = 0, differ_c = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    for (int k = 0; k < 3; ++k) differ += same(got[static_cast<std::size_t>(k)][i], plain[i]) ? 0 : 1;
    differ_c += same(got[3][i], plain[i]) ? 0 : 1;
  }
  CHECK(differ == 0);
  CHECK(differ_c > 0);  // "Invalid user" lines are not "Received disconnect" lines
}

TEST_CASE("prefilter: literals never join across lines") {
  Prefilter pf = Prefilter::make(load(rules_toml({"ERROR .* timeout"})));
  const Batch batch({"ERROR a", " timeout", "ERROR", " timeout ERROR "});
  std::vector<int32_t> verdict;
  pf.scan(batch.text, batch.spans, verdict);
  CHECK(verdict[0] == Prefilter::kNone);
  CHECK(verdict[1] == Prefilter::kNone);
  CHECK(verdict[2] == Prefilter::kNone);
  CHECK(verdict[3] >= 0);  // both in one line (in the wrong order: RE2 says no)
}

TEST_CASE("prefilter: match_batch gives what match gives, with ignore and captures") {
  const RuleSet rules = load(rules_toml(
      {"Failed password for (?P<user>\\S+) from (?P<ip>[0-9.]+)", "Invalid user (?P<user>\\S+)", "session opened"},
      {"from 10\\.0\\.", "", ""}));
  const std::vector<std::string> lines = {
      "sshd[1]: Failed password for root from 1.2.3.4 port 22",
      "sshd[1]: Failed password for root from 10.0.0.9 port 22",  // ignored
      "sshd[2]: Invalid user admin from 5.6.7.8",
      "sshd[3]: session opened for user bob",
      "sshd[4]: Accepted publickey for bob",
      "sshd[5]: FAILED PASSWORD FOR root from 1.2.3.4",     // atoms match caselessly; RE2 does not
      "sshd[6]: Failed password for j\xF6rg from 1.2.3.4",  // not UTF-8: matched as Latin-1 too
  };
  const Compared c = compare(rules, lines, 3);
  CHECK(c.differ == 0);
  CHECK(c.first_difference.empty());
  CHECK(c.hits == 4);       // lines 0, 2, 3, 6
  CHECK(c.ruled_out == 1);  // line 4 only: line 1 is a candidate, then ignored by RE2
}

// Random patterns built from pieces of real log lines, over real and mangled
// lines: the prefilter must never change a result.
TEST_CASE("prefilter: differential against RE2 alone over loghub and generated lines") {
  std::vector<std::string> corpus;
  for (const char* f : {"Apache_2k.log", "Linux_2k.log", "OpenSSH_2k.log"}) {
    for (auto& l : read_lines(std::string(SWTHROTTLE_SOURCE_DIR "/tests/data/loghub/") + f)) corpus.push_back(l);
  }
  for (const char* f :
       {"app-errors/app.log", "kernel/syslog", "nginx/access.log", "sshd/auth.log", "systemd/journal.txt"}) {
    for (auto& l : read_lines(std::string(SWTHROTTLE_SOURCE_DIR "/examples/") + f)) corpus.push_back(l);
  }
  REQUIRE(corpus.size() > 6000);

  const uint64_t seed = swthrottle::test::base_seed(20261121);
  MESSAGE("seed " << seed << " (SWTHROTTLE_SEED=N replays)");
  std::mt19937_64 rng(seed);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };

  // Lines: the corpus, plus mangled copies (case flipped, bytes >= 0x80,
  // lines glued or cut) so that atoms turn up in odd places.
  std::vector<std::string> lines = corpus;
  for (int i = 0; i < 4000; ++i) {
    std::string l = corpus[pick(corpus.size())];
    switch (pick(5)) {
      case 0:
        for (auto& ch : l)
          if (pick(4) == 0)
            ch = static_cast<char>(std::isupper(static_cast<unsigned char>(ch)) ? std::tolower(ch) : std::toupper(ch));
        break;
      case 1: l.insert(pick(l.size() + 1), pick(2) ? "\xC3\xA9" : "\xFF"); break;
      case 2: l += " " + corpus[pick(corpus.size())]; break;
      case 3: l = l.substr(pick(l.size() + 1)); break;
      default: l = l.substr(0, pick(l.size() + 1)); break;
    }
    lines.push_back(l);
  }
  std::shuffle(lines.begin(), lines.end(), rng);

  // A literal piece of a corpus line, usable in a TOML ''' string.
  auto piece = [&]() {
    for (;;) {
      const std::string& l = corpus[pick(corpus.size())];
      if (l.size() < 4) continue;
      const std::size_t len = 3 + pick(std::min<std::size_t>(10, l.size() - 2));
      const std::size_t at = pick(l.size() - std::min(len, l.size()) + 1);
      std::string p = l.substr(at, len);
      if (p.find('\'') != std::string::npos || p.find('\\') != std::string::npos) continue;
      if (std::any_of(p.begin(), p.end(), [](char ch) { return static_cast<unsigned char>(ch) >= 0x80; })) continue;
      return RE2::QuoteMeta(p);
    }
  };
  // A piece with no metacharacter, as it is: the matcher's plain-text path.
  auto plain_piece = [&]() {
    for (;;) {
      const std::string& l = corpus[pick(corpus.size())];
      if (l.size() < 4) continue;
      const std::size_t len = 3 + pick(std::min<std::size_t>(10, l.size() - 2));
      std::string p = l.substr(pick(l.size() - std::min(len, l.size()) + 1), len);
      if (p.find_first_of("\\.+*?()|[]{}^$'") != std::string::npos) continue;
      if (std::any_of(p.begin(), p.end(), [](char ch) { return static_cast<unsigned char>(ch) >= 0x80; })) continue;
      return p;
    }
  };
  auto pattern = [&]() -> std::string {
    const std::string a = piece();
    const std::string b = piece();
    if (pick(4) == 0) return plain_piece();
    switch (pick(9)) {
      case 0: return a;
      case 1: return a + ".*" + b;
      case 2: return "(?i)" + a;
      case 3: return a + "|" + b;
      case 4: return a + "[0-9]+";
      case 5: return "\\b" + a + "\\b";
      case 6: return a + " (?P<v>\\S+)";
      case 7: return "^" + a;
      default: return "(" + a + ")+" + b + "$";
    }
  };

  std::size_t active = 0, total_ruled_out = 0, total_hits = 0;
  for (int round = 0; round < 12; ++round) {
    std::vector<std::string> patterns, ignores;
    const std::size_t n = 1 + pick(12);
    for (std::size_t i = 0; i < n; ++i) {
      patterns.push_back(pattern());
      ignores.push_back(pick(4) == 0 ? piece() : "");
    }
    const RuleSet rules = load(rules_toml(patterns, ignores));
    if (Prefilter::make(rules).active()) ++active;
    const Compared c = compare(rules, lines, 1 + pick(700));
    CAPTURE(round);
    CAPTURE(rules_toml(patterns, ignores));
    CHECK_MESSAGE(c.differ == 0, "first line that differs: " << c.first_difference);
    total_ruled_out += c.ruled_out;
    total_hits += c.hits;
  }
  // Not vacuous: the prefilter was on for most rule sets, ruled out most
  // lines, and the patterns matched plenty.
  CHECK(active >= 8);
  CHECK(total_ruled_out > lines.size() * 4);
  CHECK(total_hits > 1000);
}

}  // namespace

namespace {

// One alert rule per event `fields` table (TOML inline tables), in order.
std::string fields_toml(const std::vector<std::string>& fields) {
  std::string t;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    t += "[[rule]]\nname = \"r" + std::to_string(i) + "\"\nkind = \"alert\"\nthreshold = \"5 per 1m\"\n";
    t += "  [[rule.event]]\n  name = \"e\"\n  fields = " + fields[i] + "\n";
  }
  return t;
}

// `s` as a JSON string's body: '"' and '\' escaped, control bytes as \u00XX,
// and (when `odd`) some other characters spelled as JSON also may: "\u0074"
// for 't', "\/" for '/'.
std::string json_body(std::string_view s, std::mt19937_64* odd = nullptr) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else if (odd && u < 0x80 && (*odd)() % 16 == 0) {
      char buf[8];
      std::snprintf(buf, sizeof buf, (*odd)() % 2 ? "\\u%04x" : "\\u%04X", u);
      out += buf;
    } else if (odd && c == '/' && (*odd)() % 2 == 0) {
      out += "\\/";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("prefilter: an event with only fields gives the literals of its fields, JSON-escaped") {
  // Field patterns with '"' (scanned as \"), an equality, a key, and a
  // pattern with '/' (which JSON may write \/: the field gives its key).
  const RuleSet rules = load(fields_toml({
      R"({ level = "ERROR", msg = { match = 'timeout' } })",
      R"({ msg = { match = '" 5[0-9][0-9] ' } })",
      R"({ path = { match = 'GET /api' } })",
      R"({ user = { match = '.' } })",
      R"({ msg = { match = '(?i)caf. ok' } })",
  }));
  Prefilter pf = Prefilter::make(rules);
  REQUIRE(pf.active());
  const std::vector<std::string> lines = {
      R"({"level":"ERROR","msg":"db timeout"})",                     // 0: rule 0
      R"({"level":"INFO","msg":"all fine"})",                        // 1: none: ruled out
      R"({"level":"ERROR","msg":"t\u0069meout"})",                   // 2: rule 0, an escaped letter
      R"({"level":"ERR\u004FR","msg":"timeout"})",                   // 3: rule 0, in the equality
      R"({"msg":"1.2.3.4 - - \"GET / HTTP/1.1\" 503 12"})",          // 4: rule 1, '"' escaped
      R"({"msg":"1.2.3.4 - - \u0022GET / HTTP/1.1\u0022 503 12"})",  // 5: rule 1, '"' as \u0022
      R"({"path":"GET \/api\/v1"})",                                 // 6: rule 2, '/' as \/
      R"({"path":"GET /api/v1"})",                                   // 7: rule 2
      R"({"user":"x"})",                                             // 8: rule 3, by its key
      R"({"us\u0065r":"x"})",                                        // 9: rule 3, the key escaped
      "{\"msg\":\"CAF\xC3\x89 OK\"}",                                // 10: rule 4, non-ASCII
      R"({"msg":"CAF\u00c9 OK"})",                                   // 11: rule 4, escaped
      R"({"msg":"CAF\u00C9\u0020OK"})",                              // 12: rule 4
      R"({"msg":"caf\u00e9 ok","level":"ERROR"})",                   // 13: rule 4
      R"({"msg":"nothing \"quoted\" here","level":"WARN"})",         // 14: none: ruled out
  };
  const Batch batch(lines);
  std::vector<int32_t> verdict;
  pf.scan(batch.text, batch.spans, verdict);
  CHECK(verdict[1] == Prefilter::kNone);
  CHECK(verdict[14] == Prefilter::kNone);
  auto events = [&](std::size_t line) {
    REQUIRE(verdict[line] >= 0);
    const auto p = pf.potentials(verdict[line]);
    return std::vector<uint32_t>(p.begin(), p.end());
  };
  CHECK(events(0) == std::vector<uint32_t>{0});
  CHECK(events(4) == std::vector<uint32_t>{1});  // '" 50' found as '\" 50'
  CHECK(events(6) == std::vector<uint32_t>{2});
  CHECK(events(8) == std::vector<uint32_t>{3});
  for (std::size_t i : {2, 3, 5, 9, 11, 12, 13}) CHECK(verdict[i] == Prefilter::kAll);  // "\u": any event
  // Every other line's events are those its fields can hold.
  const Compared c = compare(rules, lines, 4);
  CHECK_MESSAGE(c.differ == 0, "first line that differs: " << c.first_difference);
  CHECK(c.hits == 13);
  CHECK(c.ruled_out == 2);
}

// JSON lines made from real log lines, some characters spelled as JSON
// also may (\uXXXX, \/), against field patterns made of pieces of the same
// lines: the prefilter must never change a result.
TEST_CASE("prefilter: differential over JSON lines with escapes, fields against RE2 alone") {
  std::vector<std::string> corpus;
  for (const char* f : {"Apache_2k.log", "Linux_2k.log", "OpenSSH_2k.log"}) {
    for (auto& l : read_lines(std::string(SWTHROTTLE_SOURCE_DIR "/tests/data/loghub/") + f)) corpus.push_back(l);
  }
  const uint64_t seed = swthrottle::test::base_seed(20261126);
  MESSAGE("seed " << seed << " (SWTHROTTLE_SEED=N replays)");
  std::mt19937_64 rng(seed);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const char* const levels[] = {"ERROR", "WARN", "INFO", "err\"or", "a/b"};

  std::vector<std::string> lines;
  for (int i = 0; i < 6000; ++i) {
    std::string msg = corpus[pick(corpus.size())];
    if (pick(8) == 0) msg.insert(pick(msg.size() + 1), pick(2) ? "\xC3\xA9" : "\"q\\/");
    const std::string level = levels[pick(5)];
    std::mt19937_64* odd = pick(3) == 0 ? &rng : nullptr;
    std::string l = "{\"level\":\"" + json_body(level, odd) + "\",";
    if (pick(10) == 0) l += "\"m\\u0073g\":\"x\",";  // an escaped key ahead of the real one
    l += "\"msg\":\"" + json_body(msg, odd) + "\"}";
    if (pick(20) == 0) l = l.substr(0, pick(l.size() + 1));  // cut: not JSON
    lines.push_back(l);
  }

  // A piece of a corpus line for a TOML ''' string, quoted for RE2.
  auto piece = [&]() {
    for (;;) {
      const std::string& l = corpus[pick(corpus.size())];
      if (l.size() < 4) continue;
      const std::size_t len = 3 + pick(std::min<std::size_t>(10, l.size() - 2));
      std::string p = l.substr(pick(l.size() - std::min(len, l.size()) + 1), len);
      if (p.find('\'') != std::string::npos || p.find('\\') != std::string::npos) continue;
      return RE2::QuoteMeta(p);
    }
  };
  auto field = [&]() -> std::string {
    switch (pick(6)) {
      case 0: return "msg = { match = '''" + piece() + "''' }";
      case 1: return "msg = { match = '''(?i)" + piece() + ".*" + piece() + "''' }";
      case 2: return "msg = { match = '''" + piece() + "|" + piece() + "''' }";
      case 3: return "level = \"" + std::string(pick(2) ? "ERROR" : "err\\\"or") + "\"";
      case 4: return "level = { match = '" + std::string(pick(2) ? "R\"" : "a/") + "' }";
      default: return "msg = { match = '''" + piece() + " (?P<v>\\S+)''' }";
    }
  };
  std::size_t active = 0, ruled_out = 0, hits = 0;
  for (int round = 0; round < 12; ++round) {
    std::vector<std::string> fields;
    const std::size_t n = 1 + pick(8);
    for (std::size_t i = 0; i < n; ++i) {
      std::string f = field();
      if (pick(3) == 0 && f.rfind("level", 0) != 0) f += ", level = \"ERROR\"";
      fields.push_back("{ " + f + " }");
    }
    const RuleSet rules = load(fields_toml(fields));
    if (Prefilter::make(rules).active()) ++active;
    const Compared c = compare(rules, lines, 1 + pick(700));
    CAPTURE(round);
    CAPTURE(fields_toml(fields));
    CHECK_MESSAGE(c.differ == 0, "first line that differs: " << c.first_difference);
    ruled_out += c.ruled_out;
    hits += c.hits;
  }
  CHECK(active >= 10);
  CHECK(ruled_out > lines.size() * 2);
  CHECK(hits > 500);
}
