// window/alert_state.h: the alert state machine both window modes share,
// as a table of exact steps (DESIGN.md §3 "Alert rules").
#include <doctest/doctest.h>

#include <vector>

#include "window/alert_state.h"

using namespace swthrottle::window;

TEST_CASE("window alert state: one step of the state machine") {
  AtLeast never(1);  // the condition object is not consulted: `holds` is given
  const AlertPolicy resolve{&never, /*cooldown_ms=*/1000, /*resolve=*/true};
  const AlertPolicy quiet{&never, 1000, false};
  const AlertState idle{};
  const AlertState announced{true, true, true, 5000};     // firing, alert written at 5000
  const AlertState unannounced{true, false, true, 5000};  // firing, episode began inside the cooldown
  const AlertState cooled{false, false, true, 5000};      // not firing, alerted at 5000
  struct Step {
    const char* what;
    AlertState from;
    bool holds;
    bool from_event;
    int64_t now;
    const AlertPolicy* policy;
    AlertState to;
    AlertAction action;
  };
  const std::vector<Step> steps{
      {"first crossing alerts", idle, true, true, 100, &resolve, {true, true, true, 100}, AlertAction::Alert},
      {"a boundary check never alerts", idle, true, false, 100, &resolve, idle, AlertAction::None},
      {"not holding, not firing: nothing", idle, false, true, 100, &resolve, idle, AlertAction::None},
      {"still holding inside the cooldown", announced, true, true, 5999, &resolve, announced, AlertAction::None},
      {"cooldown over: alerts again",
       announced,
       true,
       true,
       6000,
       &resolve,
       {true, true, true, 6000},
       AlertAction::Alert},
      {"new episode inside the cooldown: not announced", cooled, true, true, 5500, &resolve, unannounced,
       AlertAction::None},
      {"announced episode ends: resolved", announced, false, false, 7000, &resolve, cooled, AlertAction::Resolved},
      {"announced episode ends on an event too", announced, false, true, 7000, &resolve, cooled, AlertAction::Resolved},
      {"without resolve: ends quietly", announced, false, false, 7000, &quiet, cooled, AlertAction::None},
      {"unannounced episode ends quietly", unannounced, false, false, 7000, &resolve, cooled, AlertAction::None},
      {"holding at a boundary: still firing", announced, true, false, 9000, &resolve, announced, AlertAction::None},
  };
  for (const Step& s : steps) {
    CAPTURE(s.what);
    const AlertStep step = next_alert_state(s.from, s.holds, s.from_event, s.now, *s.policy);
    CHECK(step.next == s.to);
    CHECK(step.action == s.action);
    CHECK(step.changed == (step.next != s.from));
  }
}

TEST_CASE("window alert state: to_string of the actions") {
  CHECK(to_string(AlertAction::Alert) == "alert");
  CHECK(to_string(AlertAction::Resolved) == "resolved");
  CHECK(to_string(Mode::Accurate) == "accurate");
  CHECK(to_string(Mode::Efficient) == "efficient");
}

// resolve_when: the episode ends only where the clear condition holds too.
TEST_CASE("window alert state: a clear condition holds a firing episode open") {
  AtLeast never(1);
  const AlertPolicy resolve{&never, 1000, true};
  const AlertState announced{true, true, true, 5000};
  const AlertState cooled{false, false, true, 5000};
  struct Step {
    const char* what;
    bool holds;
    bool clears;
    bool from_event;
    AlertState to;
    AlertAction action;
  };
  const std::vector<Step> steps{
      {"false, not cleared, at a boundary: still firing", false, false, false, announced, AlertAction::None},
      {"false, not cleared, on an event: still firing", false, false, true, announced, AlertAction::None},
      {"false and cleared: resolved", false, true, false, cooled, AlertAction::Resolved},
      {"holding: clears is not read", true, true, false, announced, AlertAction::None},
  };
  for (const Step& s : steps) {
    CAPTURE(s.what);
    const AlertStep step = next_alert_state(announced, s.holds, s.clears, s.from_event, 7000, resolve);
    CHECK(step.next == s.to);
    CHECK(step.action == s.action);
  }

  // clears(): only a firing key whose condition is false; where both hold,
  // the condition wins (never cleared).
  AtLeast some(1);  // stands in for resolve_when: holds on a count >= 1
  AlertPolicy with_clear{&never, 1000, true, &some};
  const std::vector<uint64_t> one{1}, zero{0};
  CHECK(clears(with_clear, /*firing=*/true, /*holds=*/false, one));
  CHECK_FALSE(clears(with_clear, true, false, zero));  // the clear condition is false
  CHECK_FALSE(clears(with_clear, true, /*holds=*/true, one));
  CHECK_FALSE(clears(with_clear, /*firing=*/false, false, one));
  CHECK(clears(resolve, true, false, zero));  // no clear condition: `when` false is enough
}
