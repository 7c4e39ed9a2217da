// FleetLink: what the engine asks of the fleet for a rule with `fleet`
// (man page: FLEET), the windows every host shares through one Redis. The
// engine stays pure: it never sees a socket, a thread or a clock; the App
// attaches the one implementation (fleet/rule_fleet.h), and tests attach
// their own.
//
// Every call may block its caller up to the fleet's `timeout`, and returns
// false when the fleet gave no answer in that time (Redis unreachable, slow,
// or refusing): the engine then decides by the rule's on_unreachable.
// Thread-safe: deciders of several inputs call it at once.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/rules.h"

namespace swthrottle::engine {

struct FleetAnswer {
  bool passed = false;      // throttle: the fleet window had room
  bool late = false;        // the event's bucket was older than the fleet window
  bool claimed = false;     // alert: this host raises the fleet's alert
  bool resolved = false;    // resolve: this host ended the episode
  uint64_t suppressed = 0;  // claimed, resolved: the fleet's held-back lines
  std::string episode;      // claimed: the episode this host opened
};

// An alert the fleet thread claimed for this host (fleet = "batched"): to
// be written by the App's timer thread.
struct FleetClaim {
  uint32_t rule = 0;
  std::string key;
  std::array<uint64_t, 64> counts{};  // the fleet window's per-event counts
  uint64_t suppressed = 0;
  std::string episode;
  std::string line;  // a line of this key seen here since the flush before
};

class FleetLink {
 public:
  virtual ~FleetLink() = default;

  // Throttle rule `rule` (an index into the engine's RuleSet), key `key`:
  // pass when the fleet window holds fewer than the rule's Y (one is then
  // counted at t), else suppress.
  virtual bool throttle(uint32_t rule, std::string_view key, int64_t t_ms, int64_t now_ms, FleetAnswer& out) = 0;

  // Alert rule: count `events` (bit i: event i) at t; `counts` (size E) gets
  // the fleet window's per-event counts. With `claim` (a rule with a plain
  // threshold), also claim the alert when the counts reach Y.
  virtual bool alert(uint32_t rule, std::string_view key, int64_t t_ms, int64_t now_ms, uint64_t events, bool claim,
                     std::span<uint64_t> counts, FleetAnswer& out) = 0;

  // Alert rule whose `when` this host found true: claim the alert (at most
  // one claim per cooldown succeeds, fleet-wide).
  virtual bool claim(uint32_t rule, std::string_view key, int64_t t_ms, FleetAnswer& out) = 0;

  // The fleet window's per-event counts at now (a boundary check).
  virtual bool read(uint32_t rule, std::string_view key, int64_t now_ms, std::span<uint64_t> counts) = 0;

  // End the episode this host opened, if it is still the fleet's current one.
  virtual bool resolve(uint32_t rule, std::string_view key, std::string_view episode, FleetAnswer& out) = 0;

  // fleet = "batched", alert rule: count `events` at t among this host's
  // unsynced counts, flushed every `sync` (no I/O, no wait here); `line` may
  // become the line of the fleet alert this host raises. False: the fleet
  // is unreachable (the counts are kept for later): decide without it.
  virtual bool add(uint32_t rule, std::string_view key, int64_t t_ms, int64_t now_ms, uint64_t events,
                   std::string_view line) = 0;

  // fleet = "batched", throttle: one permit of this host's lease for the
  // bucket of now (out.passed), asking Redis only for a new lease (at most
  // once per k lines or per bucket, waiting at most `timeout`).
  virtual bool lease(uint32_t rule, std::string_view key, int64_t now_ms, FleetAnswer& out) = 0;

  // An alert this host raised on its own window, without an answer from the
  // fleet: claimed in the fleet once Redis answers again, so that other
  // hosts do not raise it again within the cooldown. No wait here.
  virtual void raised_locally(uint32_t rule, std::string_view key, int64_t t_ms) = 0;

  // The alerts claimed since the last call (batched rules), appended to out.
  virtual void take_claims(std::vector<FleetClaim>& out) = 0;

  // What the rules' [fleet] on_unreachable says to do without an answer.
  virtual config::Unreachable on_unreachable() const = 0;
};

}  // namespace swthrottle::engine
