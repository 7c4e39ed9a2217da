// An alert of silence has no line (man page: SILENCE AND SEQUENCES): the
// webhook body and the Alertmanager alert take it as any other. The records
// here are the engine's own, from a watched rule.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "delivery/alertmanager_alert.h"
#include "delivery/record_body.h"
#include "delivery/record_fields.h"
#include "output/record_id.h"
#include "support/engine_run.h"
#include "support/json.h"

namespace {

namespace sw = swthrottle;

const char* const kRules = R"toml(
[[rule]]
name = "heartbeat"
kind = "alert"
window = "10s"
when = "hb < 1"
key = "{host}"
resolve = true
message = "{key}: no heartbeat within {window}{line}"
  [[rule.event]]
  name = "hb"
  match = 'HB (?P<host>\w+)'
)toml";

}  // namespace

TEST_CASE("watch delivery: an alert without a line, to a webhook and to Alertmanager") {
  sw::test::EngineRun run(kRules);
  CHECK(run.line("HB web7", 1'000) == "");
  std::vector<sw::engine::Record> out;
  run.engine().tick(11'000, out);
  REQUIRE(out.size() == 1);
  const sw::engine::Record& alert = out[0];
  REQUIRE(alert.type == sw::engine::RecordType::Alert);
  CHECK_FALSE(alert.has_line);
  CHECK(alert.message == "web7: no heartbeat within 10s");  // {line} is empty at a check

  // Webhook: the JSON record with its id, no "line" member.
  const std::string body = sw::delivery::webhook_body(alert, sw::output::record_id(alert));
  auto j = sw::test::parse_json(body);
  REQUIRE_MESSAGE(j.has_value(), body);
  CHECK((*j)["type"] == "alert");
  CHECK((*j)["key"] == "web7");
  CHECK((*j)["time"] == "1970-01-01T00:00:11.000Z");
  CHECK((*j)["count"] == 0);
  CHECK((*j)["message"] == "web7: no heartbeat within 10s");
  CHECK_FALSE(j->contains("line"));
  CHECK((*j)["id"].get<std::string>().size() > 10);

  // Alertmanager: the alert, firing, and its resolved when web7 beats again.
  sw::delivery::FiringAlerts firing(sw::delivery::AlertmanagerOptions{{}, 60'000});
  sw::delivery::AmAlert am;
  REQUIRE(firing.on_record(alert, sw::delivery::record_fields(alert, "id", "host"), 20'000, am));
  auto a = sw::test::parse_json(sw::delivery::alertmanager_body({am}));
  REQUIRE(a.has_value());
  CHECK((*a)[0]["labels"]["alertname"] == "heartbeat");
  CHECK((*a)[0]["labels"]["key"] == "web7");
  CHECK((*a)[0]["annotations"]["summary"] == "web7: no heartbeat within 10s");
  CHECK((*a)[0]["annotations"]["when"] == "hb < 1");
  CHECK((*a)[0]["startsAt"] == "1970-01-01T00:00:11.000Z");
  CHECK(firing.size() == 1);
  const std::string beat = "HB web7";
  CHECK(run.line(beat, 12'000) == "resolved t=12000 heartbeat key=web7 count=1 counts=[1] suppressed=0\n");
  out = run.last();
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].type == sw::engine::RecordType::Resolved);
  REQUIRE(firing.on_record(out[0], sw::delivery::record_fields(out[0], "id", "host"), 21'000, am));
  CHECK(am.ends_ms == 12'000);
  CHECK(firing.size() == 0);
}
