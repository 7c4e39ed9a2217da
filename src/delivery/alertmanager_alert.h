// The Alertmanager side of a record (man page: DELIVERY, "Alertmanager"):
// the body POSTed to /api/v2/alerts, and which alerts are still firing and
// must be posted again. Pure: no I/O, time comes in.
//
// One alert per rule and key: labels alertname = the rule's name, key = the
// record's key (when the rule has one), rule kind, plus the configured
// extra labels; annotations summary = the record's message (or a default
// text: "RULE: COUNT in WINDOW"), and the record's counts. startsAt is the
// alert record's time (log time with time = "log"); a resolved record posts
// the same labels with endsAt = its time, which closes the alert.
// A firing alert is posted with endsAt = now + 3 * repost interval, and
// posted again every interval while it fires (Alertmanager resolves an
// alert whose endsAt passes); a rule without `resolve` ends its alert after
// its cooldown.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/record.h"

namespace swthrottle::delivery {

struct AlertmanagerOptions {
  std::vector<std::pair<std::string, std::string>> labels;  // extra labels, every alert
  int64_t repost_ms = 60'000;                               // how often a firing alert is posted again
  std::string generator_url;                                // "" : none
};

// One alert as Alertmanager's API takes it.
struct AmAlert {
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  int64_t starts_ms = 0;
  int64_t ends_ms = 0;  // 0: none sent
};

// The JSON array POSTed to /api/v2/alerts for these alerts.
std::string alertmanager_body(const std::vector<AmAlert>& alerts, const std::string& generator_url);

// The firing alerts of one Alertmanager destination, by rule and key.
class FiringAlerts {
 public:
  explicit FiringAlerts(AlertmanagerOptions options) : options_(std::move(options)) {}

  // The alert to post for an alert or resolved record (now: wall clock);
  // false for other records. An alert record starts (or refreshes) a
  // firing alert; a resolved record ends it.
  bool on_record(const engine::Record& r, int64_t now_ms, AmAlert& out);
  // The alerts to post again at now (those whose last post is repost_ms
  // old), their endsAt moved on; alerts of rules without resolve whose
  // cooldown has passed are sent once more, ended, and forgotten.
  std::vector<AmAlert> due(int64_t now_ms);
  std::size_t size() const { return firing_.size(); }

 private:
  struct Firing {
    AmAlert alert;
    int64_t last_post_ms = 0;
    int64_t natural_end_ms = 0;  // rules without resolve: startsAt + cooldown (0: until resolved)
  };
  AlertmanagerOptions options_;
  std::map<std::pair<std::string, std::string>, Firing> firing_;  // (rule, key)
};

}  // namespace swthrottle::delivery
