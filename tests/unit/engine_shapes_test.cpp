// The rule kinds of issue 29 through the Engine: a spike (previous() in
// `when`), distinct values and first-seen values. Exact transcripts for the
// documented behaviour, then a seeded random property: a run cut in two by
// --state (through the state file's JSON) writes the records of one run.
// Every scenario runs in both modes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/rules.h"
#include "engine/engine.h"
#include "match/matcher.h"
#include "state/state_codec.h"
#include "support/seed.h"

namespace {

using swthrottle::config::RuleSet;
using swthrottle::engine::Engine;
using swthrottle::engine::ExplainEntry;
using swthrottle::engine::LineEvent;
using swthrottle::engine::Record;
using swthrottle::engine::RecordType;
using swthrottle::match::Matcher;
using swthrottle::match::MatchResult;

const std::vector<std::string> kModes{"accurate", "efficient"};

std::unique_ptr<RuleSet> load(std::string_view toml, const std::string& mode) {
  const std::string text = "[settings]\nmode = \"" + mode + "\"\n\n" + std::string(toml);
  auto r = swthrottle::config::parse_rules(text, "rules.toml");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().str()));
  return std::make_unique<RuleSet>(std::move(*r));
}

// alert|resolved <t> <rule> key=<k> count=N [previous=N..] [distinct=N(~)] [value=<v>] suppressed=N [msg=<..>]
std::string describe(const std::vector<Record>& records) {
  std::string s;
  for (const Record& r : records) {
    if (r.type == RecordType::Line) continue;
    s += r.type == RecordType::Alert ? "alert" : r.type == RecordType::Resolved ? "resolved" : "summary";
    s += " " + std::to_string(r.time_ms) + " " + r.rule->name + " key=" + r.key + " count=" + std::to_string(r.count);
    for (uint64_t p : r.previous) s += " previous=" + std::to_string(p);
    if (r.has_distinct) s += " distinct=" + std::to_string(r.distinct) + (r.distinct_estimated ? "~" : "");
    if (r.has_value) s += " value=" + r.value;
    s += " suppressed=" + std::to_string(r.suppressed);
    if (r.has_message) s += " msg=<" + r.message + ">";
    s += "\n";
  }
  return s;
}

class Harness {
 public:
  Harness(std::string_view toml, const std::string& mode)
      : rules_(load(toml, mode)), matcher_(std::move(*Matcher::make(*rules_))), engine_(*rules_, {}) {}
  // A later run with --state: the state of `before`, through the file's JSON.
  Harness(const Harness& before, std::string_view toml, const std::string& mode) : Harness(toml, mode) {
    const std::string text = swthrottle::state::to_json(before.engine_.save_state(), 0);
    auto st = swthrottle::state::from_json(text);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().what));
    CHECK(engine_.load_state(*st).empty());
  }
  std::string offer(std::string_view text, int64_t t_ms, std::vector<ExplainEntry>* explain = nullptr) {
    const std::string line(text);
    matcher_.match(line, m_);
    engine_.offer(LineEvent{line, true, t_ms}, m_, out_, explain);
    return describe(out_);
  }
  Engine& engine() { return engine_; }

 private:
  std::unique_ptr<RuleSet> rules_;
  Matcher matcher_;
  Engine engine_;
  MatchResult m_;
  std::vector<Record> out_;
};

// 10 s windows of 1 s buckets.
const char* const kSpike = R"toml(
[[rule]]
name = "spike"
kind = "alert"
window = "10s"
when = "err >= 3 * previous(err) and previous(err) >= 5"
resolve = true
message = "{count} after {previous}"
  [[rule.event]]
  name = "err"
  match = 'ERR'
)toml";

TEST_CASE("engine shapes: a spike compares the window with the one before it") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    Harness h(kSpike, mode);
    // 1 error a second for 20 s: never 3 times the previous window once it
    // holds 5 (before that, the minimum keeps a quiet start from firing).
    for (int64_t s = 0; s < 20; ++s) CHECK(h.offer("ERR", s * 1000) == "");
    // t = 20..: the window 11..20 holds 9 + the new ones; previous 1..10 holds 10.
    for (int64_t i = 0; i < 20; ++i) CHECK(h.offer("ERR", 20000 + i) == "");  // 29 < 30
    CHECK(h.offer("ERR", 20020) == "alert 20020 spike key= count=30 previous=10 suppressed=0 msg=<30 after 10>\n");
    // At 31 s the window is buckets 22..31: empty, the previous one 12..21 holds 8 + 21 = 29: resolved.
    std::vector<ExplainEntry> ex;
    CHECK(h.offer("ok", 31000, &ex) == "resolved 31000 spike key= count=0 previous=29 suppressed=0 msg=<0 after 29>\n");
    h.offer("ERR", 31500, &ex);
    REQUIRE(ex.size() == 1);
    CHECK(ex[0].counts == std::vector<uint64_t>{1, 29});  // err, previous(err)
  }
}

const char* const kDistinct = R"toml(
[[rule]]
name = "many-ips"
kind = "alert"
threshold = "3 per 10s"
key = "{user}"
distinct = "{ip}"
resolve = true
message = "{user} from {distinct}"
  [[rule.event]]
  name = "login"
  match = 'login (?P<user>\w+)(?: from (?P<ip>\S+))?'
)toml";

TEST_CASE("engine shapes: distinct counts each value once per window and key") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    Harness h(kDistinct, mode);
    CHECK(h.offer("login alice from 1.1.1.1", 0) == "");
    CHECK(h.offer("login alice from 1.1.1.1", 100) == "");  // again: still 1
    CHECK(h.offer("login bob from 2.2.2.2", 200) == "");
    CHECK(h.offer("login alice from 2.2.2.2", 300) == "");
    CHECK(h.offer("login alice", 350) == "");  // no address: no value
    CHECK(h.offer("login alice from 1.1.1.1", 400) == "");
    std::vector<ExplainEntry> ex;
    CHECK(h.offer("login alice from 3.3.3.3", 500, &ex) ==
          "alert 500 many-ips key=alice count=6 distinct=3 suppressed=0 msg=<alice from 3>\n");
    REQUIRE(ex.size() == 1);
    CHECK(ex[0].counts == std::vector<uint64_t>{6, 3});  // login, distinct
    CHECK_FALSE(ex[0].decision.estimated);
    // All of alice's lines are in bucket 0, which leaves the window at 10 s:
    // the boundary check resolves her (a resolve of a boundary check has no
    // line: {user} is empty).
    CHECK(h.offer("login carol from 9.9.9.9", 9999) == "");
    CHECK(h.offer("login carol from 9.9.9.9", 10000) ==
          "resolved 10000 many-ips key=alice count=0 distinct=0 suppressed=0 msg=< from 0>\n");
  }
}

const char* const kNew = R"toml(
[[rule]]
name = "new-ua"
kind = "alert"
key = "{user}"
new = "{ua}"
remember = "1m"
learn = "10s"
max_values = 3
  [[rule.event]]
  name = "req"
  match = 'user=(?P<user>\w+)(?: ua=(?P<ua>\S+))?'
)toml";

TEST_CASE("engine shapes: new values alert once, after learning, per key, within remember") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    Harness h(kNew, mode);
    CHECK(h.offer("noise", 0) == "");  // the run starts: learning until 10 s
    CHECK(h.offer("user=a ua=curl", 5000) == "");
    CHECK(h.offer("user=a ua=curl", 10000) == "");  // learned
    CHECK(h.offer("user=a ua=wget", 10000) == "alert 10000 new-ua key=a count=1 value=wget suppressed=0\n");
    CHECK(h.offer("user=a ua=wget", 10001) == "");
    CHECK(h.offer("user=b ua=wget", 10002) == "alert 10002 new-ua key=b count=1 value=wget suppressed=0\n");
    CHECK(h.offer("user=b", 10003) == "");  // no value
    // A fourth value pushes out the least recently seen, a's curl (seen at 10 s);
    // back, it is new again, and a's wget makes room for it.
    CHECK(h.offer("user=c ua=x", 10004) == "alert 10004 new-ua key=c count=1 value=x suppressed=0\n");
    CHECK(h.offer("user=a ua=curl", 10005) == "alert 10005 new-ua key=a count=1 value=curl suppressed=0\n");
    // Not seen for a minute: new again. b's wget and c's x (last seen 60 s
    // ago or more) are forgotten first; a's curl (10.005 s) stays.
    CHECK(h.offer("user=c ua=x", 70004) == "alert 70004 new-ua key=c count=1 value=x suppressed=0\n");
    CHECK(h.engine().values_remembered(0) == 2);
    CHECK(h.engine().rule_stats(0).evictions.get() == 2);  // a's curl, then a's wget, at the cap
    CHECK(h.engine().rule_stats(0).learned.get() == 1);    // the 5 s line
  }
}

// A run cut in two by --state (through its JSON) writes the records of one
// run, for all three kinds at once: random users, addresses (enough to push
// distinct past 256 and into estimates) and agents, times with steps back.
TEST_CASE("engine shapes: a --state restart continues every kind as one run") {
  const char* const rules = R"toml(
[[rule]]
name = "spike"
kind = "alert"
window = "10s"
when = "err >= 2 * previous(err) and err >= 4"
resolve = true
key = "{user}"
  [[rule.event]]
  name = "err"
  match = 'user=(?P<user>\w+) ip=(?P<ip>\S+) ua=(?P<ua>\S+) ERR'

[[rule]]
name = "distinct"
kind = "alert"
window = "20s"
when = "distinct >= 200"
distinct = "{ip}"
resolve = true
  [[rule.event]]
  name = "any"
  match = 'user=(?P<user>\w+) ip=(?P<ip>\S+) ua=(?P<ua>\S+)'

[[rule]]
name = "distinct-per-user"
kind = "alert"
threshold = "8 per 5s"
key = "{user}"
distinct = "{ip}"
  [[rule.event]]
  name = "any"
  match = 'user=(?P<user>\w+) ip=(?P<ip>\S+) ua=(?P<ua>\S+)'

[[rule]]
name = "new"
kind = "alert"
key = "{user}"
new = "{ua}"
remember = "30s"
learn = "5s"
max_values = 40
  [[rule.event]]
  name = "any"
  match = 'user=(?P<user>\w+) ip=(?P<ip>\S+) ua=(?P<ua>\S+)'
)toml";
  const uint64_t base = swthrottle::test::base_seed(2911);
  MESSAGE("engine shapes restart base seed " << base);
  for (uint64_t i = 0; i < 8; ++i) {
    const uint64_t seed = base + i;
    const std::string& mode = kModes[i % 2];
    INFO("seed " << seed << " mode " << mode);
    std::mt19937_64 rng(seed);
    std::vector<std::pair<std::string, int64_t>> lines;
    int64_t t = 0;
    for (int n = 0; n < 3000; ++n) {
      t += static_cast<int64_t>(rng() % 40);
      const int64_t at = rng() % 10 == 0 ? std::max<int64_t>(0, t - static_cast<int64_t>(rng() % 3000)) : t;
      const uint64_t burst = (t / 7000) % 3 == 0 ? 400 : 30;  // some stretches with many addresses
      lines.emplace_back("user=u" + std::to_string(rng() % 5) + " ip=10.0." + std::to_string(rng() % burst) +
                             ".1 ua=a" + std::to_string(rng() % 50) + (rng() % 3 == 0 ? " ERR" : ""),
                         at);
    }
    Harness one(rules, mode);
    std::string whole;
    for (const auto& [text, at] : lines) whole += one.offer(text, at);
    auto first = std::make_unique<Harness>(rules, mode);
    std::string cut;
    for (std::size_t n = 0; n < lines.size() / 2; ++n) cut += first->offer(lines[n].first, lines[n].second);
    Harness second(*first, rules, mode);
    for (std::size_t n = lines.size() / 2; n < lines.size(); ++n) cut += second.offer(lines[n].first, lines[n].second);
    CHECK(cut == whole);
    CHECK(whole.find("distinct=") != std::string::npos);
    CHECK(whole.find("value=") != std::string::npos);
    CHECK(whole.find("previous=") != std::string::npos);
  }
}

}  // namespace
