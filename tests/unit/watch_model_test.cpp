// Watched rules and sequences (man page: SILENCE AND SEQUENCES) against the
// reference model of tests/support/watch_model.h: random rules (a condition
// that holds on an empty window or not, `for`, cooldown, resolve,
// resolve_when, forget, with and without key, a sequence's `then` and
// `within`) over random lines and timer ticks, as a time = "log" replay
// feeds the engine: the engine's records must be the model's, record by
// record, in both window modes. The model evaluates every key at every
// boundary; the engine visits only the keys its wheel says are due, so
// this is also the test that the wheel misses nothing.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "support/engine_run.h"
#include "support/seed.h"
#include "support/watch_model.h"

namespace {

namespace sw = swthrottle;
using sw::test::Counts;
using sw::test::EngineRun;
using sw::test::WatchModel;
using sw::test::WatchRuleModel;

// Conditions over the events a and b, as `when` text and as the model's test.
struct Condition {
  const char* text;
  bool (*holds)(const Counts&);
};
const Condition kWatched[] = {
    {"a < 1", [](const Counts& c) { return c[0] < 1; }},
    {"a < 3", [](const Counts& c) { return c[0] < 3; }},
    {"a + b < 2", [](const Counts& c) { return c[0] + c[1] < 2; }},
    {"b < 1 or a > 3", [](const Counts& c) { return c[1] < 1 || c[0] > 3; }},
};
// Conditions that do not hold on an empty window: watched only with `for`.
const Condition kLasting[] = {
    {"a >= 2", [](const Counts& c) { return c[0] >= 2; }},
    {"a >= 1 and b < 1", [](const Counts& c) { return c[0] >= 1 && c[1] < 1; }},
    {"a - b > 1", [](const Counts& c) { return static_cast<double>(c[0]) - static_cast<double>(c[1]) > 1; }},
};
const Condition kClear[] = {
    {"a > 4", [](const Counts& c) { return c[0] > 4; }},
    {"b >= 1", [](const Counts& c) { return c[1] >= 1; }},
};
const Condition kThen[] = {
    {"b >= 1", [](const Counts& c) { return c[1] >= 1; }},
    {"a >= 2 and b >= 1", [](const Counts& c) { return c[0] >= 2 && c[1] >= 1; }},
};

std::string ms_text(int64_t ms) { return ms % 1000 == 0 ? std::to_string(ms / 1000) + "s" : std::to_string(ms) + "ms"; }

struct Case {
  std::string toml;
  WatchRuleModel model;
};

Case random_case(std::mt19937_64& rng, const std::string& mode, bool sequence) {
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  Case c;
  WatchRuleModel& m = c.model;
  m.name = "r";
  const uint32_t bucket_choices[] = {1, 2, 5, 10};
  m.buckets = bucket_choices[pick(4)];
  m.window_ms = 10'000;
  m.keyed = pick(3) != 0;
  std::string t = "[[rule]]\nname = \"r\"\nkind = \"alert\"\nmode = \"" + mode +
                  "\"\nwindow = \"10s\"\nbuckets = " + std::to_string(m.buckets) + "\n";
  if (m.keyed) t += "key = \"{host}\"\n";
  const int64_t cooldowns[] = {0, 4'000, 10'000, 25'000};
  m.cooldown_ms = cooldowns[pick(4)];
  t += m.cooldown_ms == 0 ? "cooldown = \"0\"\n" : "cooldown = \"" + ms_text(m.cooldown_ms) + "\"\n";
  if (sequence) {
    const Condition& w = kLasting[pick(3)];
    const Condition& th = kThen[pick(2)];
    m.when = w.holds;
    m.then = th.holds;
    const int64_t withins[] = {3'000, 10'000, 30'000};
    m.within_ms = withins[pick(3)];
    t += std::string("when = \"") + w.text + "\"\nthen = \"" + th.text + "\"\nwithin = \"" + ms_text(m.within_ms) +
         "\"\n";
  } else {
    const bool lasting = pick(3) == 0;
    const Condition& w = lasting ? kLasting[pick(3)] : kWatched[pick(4)];
    m.when = w.holds;
    t += std::string("when = \"") + w.text + "\"\n";
    const int64_t fors[] = {0, 1'500, 3'000, 7'000, 25'000};
    m.for_ms = fors[lasting ? 1 + pick(4) : pick(5)];
    if (m.for_ms > 0) t += "for = \"" + ms_text(m.for_ms) + "\"\n";
    switch (pick(3)) {
      case 0: break;
      case 1:
        m.resolve = true;
        t += "resolve = true\n";
        break;
      default: {
        const Condition& cl = kClear[pick(2)];
        m.resolve_when = cl.holds;
        t += std::string("resolve_when = \"") + cl.text + "\"\n";
      }
    }
    if (m.keyed) {
      const int64_t forgets[] = {0, 10'000, 15'000, 35'000};
      m.forget_ms = forgets[pick(4)];
      if (m.forget_ms > 0) t += "forget = \"" + ms_text(m.forget_ms) + "\"\n";
      else m.forget_ms = 30'000;  // the default: three windows
    }
  }
  t += "  [[rule.event]]\n  name = \"a\"\n  match = 'xa .*host=(?P<host>\\w+)'\n";
  t += "  [[rule.event]]\n  name = \"b\"\n  match = 'xb .*host=(?P<host>\\w+)'\n";
  c.toml = t;
  return c;
}

// What the records of the runs compared were: not a vacuous comparison.
struct Seen {
  int alerts = 0, resolveds = 0, silent_alerts = 0;  // silent: at a boundary check, no line
  void add(const std::string& records) {
    for (std::size_t p = 0; p < records.size();) {
      const std::size_t e = records.find('\n', p);
      const std::string r = records.substr(p, e - p);
      if (r.rfind("alert", 0) == 0) {
        ++alerts;
        if (r.find(" |") == std::string::npos) ++silent_alerts;
      } else if (r.rfind("resolved", 0) == 0) {
        ++resolveds;
      }
      p = e + 1;
    }
  }
};

// Random lines (events a, b, both or none, five hosts) and ticks: mostly
// small steps, silences up to a minute, and lines behind the others (some
// late for the window).
void run_case(std::mt19937_64& rng, const Case& c, int steps, Seen& seen) {
  INFO("rules:\n" << c.toml);
  EngineRun engine(c.toml);
  WatchModel model(c.model);
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
  int64_t t = 1'795'255'200'000 + pick(10'000);
  std::string transcript;
  for (int i = 0; i < steps; ++i) {
    const int64_t r = pick(100);
    if (r < 70) t += pick(1'500);
    else if (r < 85) t += 2'000 + pick(9'000);
    else if (r < 93) t += 10'000 + pick(50'000);
    const int64_t at = pick(100) < 8 ? t - pick(15'000) : t;
    if (pick(100) < 12) {
      const std::string e = engine.tick(at), m = model.tick(at);
      transcript += "tick " + std::to_string(at) + "\n" + m;
      REQUIRE_MESSAGE(e == m, "step " << i << "\n" << transcript);
      seen.add(m);
      continue;
    }
    const std::string host = "h" + std::to_string(pick(5));
    const int64_t ev = pick(10);
    const uint64_t mask = ev < 5 ? 1 : ev < 8 ? 2 : ev < 9 ? 3 : 0;
    std::string text = mask == 0 ? "noise" : (mask & 1 ? "xa " : "") + std::string(mask & 2 ? "xb " : "");
    text += "host=" + host + " #" + std::to_string(i);
    const std::string e = engine.line(text, at), m = model.line(at, host, mask, text);
    transcript += "line " + std::to_string(at) + " " + text + "\n" + m;
    REQUIRE_MESSAGE(e == m, "step " << i << "\n" << transcript);
    seen.add(m);
  }
}

}  // namespace

TEST_CASE("watch model: watched rules (silence, for, forget, cooldown, resolve) equal the model") {
  const uint64_t seed = sw::test::base_seed(33);
  INFO("seed " << seed << " (SWTHROTTLE_SEED replays it)");
  std::mt19937_64 rng(seed);
  Seen seen;
  for (int k = 0; k < 400; ++k) {
    const std::string mode = k % 2 ? "accurate" : "efficient";
    CAPTURE(k);
    run_case(rng, random_case(rng, mode, /*sequence=*/false), 250, seen);
  }
  // Not vacuous: silence raised alerts at boundary checks, lines raised
  // others, and episodes ended.
  CHECK(seen.silent_alerts > 200);
  CHECK(seen.alerts - seen.silent_alerts > 200);
  CHECK(seen.resolveds > 200);
}

TEST_CASE("watch model: sequences (when, then within) equal the model") {
  const uint64_t seed = sw::test::base_seed(3333);
  INFO("seed " << seed << " (SWTHROTTLE_SEED replays it)");
  std::mt19937_64 rng(seed);
  Seen seen;
  for (int k = 0; k < 200; ++k) {
    const std::string mode = k % 2 ? "accurate" : "efficient";
    CAPTURE(k);
    run_case(rng, random_case(rng, mode, /*sequence=*/true), 250, seen);
  }
  CHECK(seen.alerts > 200);
  CHECK(seen.silent_alerts == 0);  // a sequence alerts on the line that completes it
}
