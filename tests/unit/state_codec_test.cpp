// state_codec.h: the exact text of a state whose strings are not all UTF-8.
// (The rest of the format is pinned in state_file_test.cpp.) This text is
// what swthrottle wrote before the codec moved to nlohmann-json, byte for
// byte: state files written by older versions load, and older versions load
// ours.
#include <doctest/doctest.h>

#include <string>

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
  w.buckets = {{12, {1, 2}}, {13, {0, 18446744073709551615u}}};
  w.pending = {0, -1, -1, {}};
  WindowState v;
  v.now_ms = -1;
  v.firing = true;
  v.last_alert_ms = -9223372036854775807 - 1;
  s.rules.push_back({"r\xff", "fp\0\x01\x80"s, {{"10.0.0.1 \xc3\x28", w}, {"caf\xc3\xa9\x7f\x1f\"\\/", v}}});

  const std::string want =
      R"({"swthrottle_state":1,"saved_at":"1970-01-01T00:02:05.000Z","now_ms":125000,"last_log_ms":124000,"rules":[)"
      "\n"
      R"({"rule":{"base64":"cv8="},"fingerprint":{"base64":"ZnAAAYA="},"windows":[)"
      "\n"
      R"({"key":{"base64":"MTAuMC4wLjEgwyg="},"now_ms":125000,"buckets":[[12,[1,2]],[13,[0,18446744073709551615]]],)"
      R"("pending":{"suppressed":0,"first_ms":-1,"last_ms":-1},)"
      R"("firing":false,"announced":false,"alerted":false,"last_alert_ms":0,"alert_suppressed":0},)"
      "\n"
      "{\"key\":\"caf\xc3\xa9\x7f\\u001f\\\"\\\\/\",\"now_ms\":-1,\"buckets\":[],"
      R"("pending":{"suppressed":0,"first_ms":0,"last_ms":0},)"
      R"("firing":true,"announced":false,"alerted":false,"last_alert_ms":-9223372036854775808,"alert_suppressed":0}]}]})"
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
  CHECK(back->rules[0].windows[0].window.buckets[1].counts[1] == 18446744073709551615u);
  CHECK(back->rules[0].windows[1].window.last_alert_ms == -9223372036854775807 - 1);
  CHECK(to_json(*back, 125000) == want);
}
