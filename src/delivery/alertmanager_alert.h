// The Alertmanager side of a record (man page: DELIVERY, "Alertmanager"):
// the body POSTed to /api/v2/alerts, and which alerts are still firing and
// must be posted again. Pure: no I/O, time comes in.
//
// One alert per rule and key, its labels and annotations those of
// alert_attributes.h, its generatorURL the rule's generator_url.
//
// Times. startsAt is the alert record's time (log time with time = "log";
// now_ms for a record written before any log time was seen). A firing alert
// is posted with endsAt = max(now, startsAt) + 3 * repost interval (the max:
// a log clock ahead of ours must not make endsAt come before startsAt, which
// Alertmanager refuses with 400), and posted again every interval while it
// fires: should swthrottle stop, Alertmanager resolves the alert itself once
// endsAt passes. A resolved record posts the same labels with endsAt = its
// time, which closes the alert; a log clock behind startsAt gives endsAt =
// startsAt (equal is accepted, earlier is not). A rule without `resolve`
// ends its alert once its cooldown has passed: endsAt = the last alert
// record's time + cooldown, counted in record time as the engine counts the
// cooldown (and compared with due()'s now: with time = "log" on old logs,
// the alert ends at the next due()).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/record.h"

namespace swthrottle::delivery {

// Validated by the caller (the destination's configuration): label names
// with valid_label_name(), repost_ms > 0.
struct AlertmanagerOptions {
  std::vector<std::pair<std::string, std::string>> labels;  // [delivery] labels, every alert
  int64_t repost_ms = 60'000;                               // how often a firing alert is posted again
};

// Is `name` a label name Alertmanager takes: [a-zA-Z_][a-zA-Z0-9_]* (the
// Prometheus data model)? Alertmanager drops an alert with any other name
// and answers the POST with 400 (storing the batch's other alerts). Names
// starting with "__" match too: Prometheus keeps them for itself, but
// Alertmanager 0.25 takes them.
bool valid_label_name(std::string_view name);

// One alert as Alertmanager's API takes it.
struct AmAlert {
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  int64_t starts_ms = 0;
  int64_t ends_ms = 0;        // 0: none sent
  std::string generator_url;  // "" : none sent
};

// One alert as /api/v2/alerts takes it:
//   {"labels":{...},"annotations":{...},"startsAt":"2026-11-21T10:00:05.000Z",
//    "endsAt":"...","generatorURL":"..."}
// members in that order, labels and annotations sorted by name; times are
// RFC 3339 UTC with milliseconds; endsAt is left out when ends_ms is 0 and
// generatorURL when generator_url is "". Strings are repaired to UTF-8.
// (The body of one delivery: request_builder.h makes the array.)
std::string alertmanager_alert_body(const AmAlert& a);

// The JSON array POSTed to /api/v2/alerts for these alerts, one object each.
std::string alertmanager_body(const std::vector<AmAlert>& alerts);

// The firing alerts of one Alertmanager destination, by rule and key.
class FiringAlerts {
 public:
  explicit FiringAlerts(AlertmanagerOptions options) : options_(std::move(options)) {}

  // The alert to post for an alert or resolved record (now: wall clock);
  // false for other records. An alert record starts (or refreshes) a
  // firing alert; a resolved record ends it. A refresh (an alert record for
  // a rule and key already firing) keeps startsAt, as Alertmanager itself
  // keeps the earliest, takes the new annotations and, for a rule without
  // resolve, counts the cooldown again from the new record. A resolved
  // record for an alert not firing here (swthrottle restarted) is posted
  // all the same, startsAt = endsAt = its time: Alertmanager may still hold
  // the alert from before.
  // `fields`: record_fields() of r (annotations and generator_url are
  // rendered from them).
  bool on_record(const engine::Record& r, std::span<const std::string> fields, int64_t now_ms, AmAlert& out);
  // The alerts to post again at now (those whose last post is repost_ms
  // old), their endsAt moved on; alerts of rules without resolve whose
  // cooldown has passed (now >= the last alert record's time + cooldown)
  // are sent once more, ended, and forgotten. In (rule, key) order.
  std::vector<AmAlert> due(int64_t now_ms);
  std::size_t size() const { return firing_.size(); }

 private:
  struct Firing {
    AmAlert alert;
    int64_t last_post_ms = 0;
    int64_t natural_end_ms = 0;  // rules without resolve: last alert record + cooldown (0: until resolved)
  };
  // The labels, annotations and generator URL of r's alert (times left to
  // the caller).
  AmAlert make_alert(const engine::Record& r, std::span<const std::string> fields) const;
  // endsAt of a firing post at now: see the file comment.
  int64_t firing_end(int64_t starts_ms, int64_t now_ms) const;
  AlertmanagerOptions options_;
  std::map<std::pair<std::string, std::string>, Firing> firing_;  // (rule, key)
};

}  // namespace swthrottle::delivery
