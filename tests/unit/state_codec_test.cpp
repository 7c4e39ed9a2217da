// state_codec.h: the exact text of a state whose strings are not all UTF-8.
// (The rest of the format is pinned in state_file_test.cpp.) This text is
// what swthrottle wrote before the codec moved to nlohmann-json, byte for
// byte: state files written by older versions load, and older versions load
// ours.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "state/state_codec.h"

using swthrottle::engine::EngineState;
using swthrottle::state::from_json;
using swthrottle::state::to_json;
using swthrottle::window::WindowState;
using namespace std::string_literals;

TEST_CASE("state codec: exact text of a state with a key and a rule name that are not UTF-8") {
  EngineState s;
  s.now_ms = 125000;
  s.last_log_ms = 124000;
  WindowState w;
  w.now_ms = 125000;
  w.buckets = {{12, {1, 2}}, {13, {0, 1099511627776u}}};  // the largest count a bucket may hold (2^40)
  w.pending = {0, -1, -1};
  WindowState v;
  v.now_ms = 0;
  v.firing = true;
  v.alerted = true;
  s.rules.push_back({"r\xff", "fp\0\x01\x80"s, {{"10.0.0.1 \xc3\x28", w}, {"caf\xc3\xa9\x7f\x1f\"\\/", v}}});

  const std::string want =
      R"({"swthrottle_state":1,"saved_at":"1970-01-01T00:02:05.000Z","now_ms":125000,"last_log_ms":124000,"rules":[)"
      "\n"
      R"({"rule":{"base64":"cv8="},"fingerprint":{"base64":"ZnAAAYA="},"windows":[)"
      "\n"
      R"({"key":{"base64":"MTAuMC4wLjEgwyg="},"now_ms":125000,"buckets":[[12,[1,2]],[13,[0,1099511627776]]],)"
      R"("pending":{"suppressed":0,"first_ms":-1,"last_ms":-1},)"
      R"("firing":false,"announced":false,"alerted":false,"last_alert_ms":0,"alert_suppressed":0},)"
      "\n"
      "{\"key\":\"caf\xc3\xa9\x7f\\u001f\\\"\\\\/\",\"now_ms\":0,\"buckets\":[],"
      R"("pending":{"suppressed":0,"first_ms":0,"last_ms":0},)"
      R"("firing":true,"announced":false,"alerted":true,"last_alert_ms":0,"alert_suppressed":0}]}]})"
      "\n";
  CHECK(to_json(s, 125000) == want);

  auto back = from_json(want);
  REQUIRE(back.ok());
  REQUIRE(back->rules.size() == 1);
  CHECK(back->rules[0].rule == "r\xff");
  CHECK(back->rules[0].fingerprint == "fp\0\x01\x80"s);
  REQUIRE(back->rules[0].windows.size() == 2);
  CHECK(back->rules[0].windows[0].key == "10.0.0.1 \xc3\x28");
  CHECK(back->rules[0].windows[1].key == "caf\xc3\xa9\x7f\x1f\"\\/");
  CHECK(back->rules[0].windows[0].window.buckets[1].counts[1] == 1099511627776u);
  CHECK(back->rules[0].windows[1].window.alerted);
  CHECK(to_json(*back, 125000) == want);
}

TEST_CASE("state codec: a pending summary's per-event counts, only where a window has them") {
  // A multi-event throttle's pending lines carry their counts; the window
  // written after it (the writer reuses one object) has none, as before.
  EngineState s;
  s.now_ms = 5000;
  s.last_log_ms = 5000;
  WindowState with;
  with.now_ms = 5000;
  with.pending = {4, 200, 500};
  with.pending_counts = {3, 2};
  WindowState without;
  without.now_ms = 5000;
  without.pending = {1, 300, 300};
  s.rules.push_back({"net", "fp", {{"db1", with}, {"db2", without}}});

  const std::string want =
      R"({"swthrottle_state":1,"saved_at":"1970-01-01T00:00:05.000Z","now_ms":5000,"last_log_ms":5000,"rules":[)"
      "\n"
      R"({"rule":"net","fingerprint":"fp","windows":[)"
      "\n"
      R"({"key":"db1","now_ms":5000,"buckets":[],"pending":{"suppressed":4,"first_ms":200,"last_ms":500,"counts":[3,2]},)"
      R"("firing":false,"announced":false,"alerted":false,"last_alert_ms":0,"alert_suppressed":0},)"
      "\n"
      R"({"key":"db2","now_ms":5000,"buckets":[],"pending":{"suppressed":1,"first_ms":300,"last_ms":300},)"
      R"("firing":false,"announced":false,"alerted":false,"last_alert_ms":0,"alert_suppressed":0}]}]})"
      "\n";
  CHECK(to_json(s, 5000) == want);

  auto back = from_json(want);
  REQUIRE(back.ok());
  REQUIRE(back->rules.size() == 1);
  REQUIRE(back->rules[0].windows.size() == 2);
  CHECK(back->rules[0].windows[0].window.pending_counts == std::vector<uint64_t>{3, 2});
  CHECK(back->rules[0].windows[1].window.pending_counts.empty());
  CHECK(to_json(*back, 5000) == want);

  // Counts that are not non-negative integers make the file not ours.
  std::string bad = want;
  bad.replace(bad.find("[3,2]"), 5, "[3,-2]");
  auto err = from_json(bad);
  REQUIRE_FALSE(err.ok());
  CHECK(err.error().what.find("rules[0].windows[0].pending.counts[1]") != std::string::npos);
}

TEST_CASE("state codec: fleet counts not sent yet round-trip, and are absent when none") {
  swthrottle::engine::EngineState s;
  s.now_ms = 5000;
  CHECK(to_json(s, 0).find("fleet_unsent") == std::string::npos);
  swthrottle::engine::FleetUnsent u;
  u.rule = "oom";
  u.hash_key = "swt:{t:oom:0123456789abcdef:\xff}";  // a key that is not UTF-8
  u.key = "\xff";
  u.host = "h1:1795255205000";
  u.seq = 7;
  u.now_bucket = 299'209'200;
  u.newest_t_ms = 1'795'255'205'000;
  u.counts = {{299'209'199, 0, 3}, {299'209'200, 1, 2}};
  s.fleet_unsent.push_back(u);
  const auto back = from_json(to_json(s, 0));
  REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error().str()));
  REQUIRE(back->fleet_unsent.size() == 1);
  const auto& v = back->fleet_unsent[0];
  CHECK(v.rule == u.rule);
  CHECK(v.hash_key == u.hash_key);
  CHECK(v.key == u.key);
  CHECK(v.host == u.host);
  CHECK(v.seq == 7);
  CHECK(v.now_bucket == u.now_bucket);
  CHECK(v.newest_t_ms == u.newest_t_ms);
  REQUIRE(v.counts.size() == 2);
  CHECK(v.counts[1].bucket == 299'209'200);
  CHECK(v.counts[1].event == 1);
  CHECK(v.counts[1].n == 2);
  std::string bad = to_json(s, 0);
  bad.replace(bad.find("[299209200,1,2]"), 15, "[299209200,64,2]");
  const auto refused = from_json(bad);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().what == "fleet_unsent[0].counts[1]: event 64 out of range");
}
