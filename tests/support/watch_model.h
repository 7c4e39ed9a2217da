// A deliberately naive reference model of the watched rules and sequences
// (man page: SILENCE AND SEQUENCES), written from the contract, not from the
// engine: every known key is evaluated at every bucket boundary "now"
// crosses, in key order, at the boundary's time; no timer wheel, no due
// lists, no deadlines. Each key's counts are a WindowModel (window_model.h).
// The model-based tests (tests/unit/watch_test.cpp) feed the engine and this
// model the same random lines and ticks and demand the same records.
//
// Records are written as strings:
//   alert|resolved t=T RULE key=K count=N counts=[..] suppressed=N [|LINE|]
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/window_model.h"

namespace swthrottle::test {

using Counts = std::vector<uint64_t>;
using CountsTest = std::function<bool(const Counts&)>;

struct WatchRuleModel {
  std::string name = "r";
  int64_t window_ms = 10'000;
  uint32_t buckets = 10;
  uint32_t events = 2;
  CountsTest when;
  std::optional<CountsTest> resolve_when;  // implies resolve
  int64_t for_ms = 0;
  int64_t cooldown_ms = 10'000;
  bool resolve = false;
  bool keyed = true;
  int64_t forget_ms = 0;  // keyed watched rules; 0: never
  // A sequence instead: `then` over the counts since `when` held, `within`.
  std::optional<CountsTest> then;
  int64_t within_ms = 0;
};

class WatchModel {
 public:
  explicit WatchModel(WatchRuleModel r) : r_(std::move(r)) {}

  // A line at t for `key` ("" without key) with events `mask`: the records it makes.
  std::string line(int64_t t, const std::string& key, uint64_t mask, const std::string& text) {
    std::string out = move_to(std::max<int64_t>(t, 0));
    if (mask == 0) return out;  // no event of the rule: it only moves now
    t = std::max<int64_t>(t, 0);
    const std::string k = r_.keyed ? key : "";
    auto it = keys_.find(k);
    if (it == keys_.end()) it = keys_.emplace(k, Key(spec())).first;
    Key& key_state = it->second;
    key_state.win.advance(now_);
    if (key_state.win.late(t / width())) return out;  // changes nothing
    for (uint32_t e = 0; e < r_.events; ++e)
      if (mask >> e & 1) key_state.win.add(t, e);
    const Counts c = key_state.win.counts();
    if (r_.then) return out + sequence_line(k, key_state, mask, c, text);
    if (!key_state.seen) {
      key_state.seen = true;
      key_state.since = now_;
    }
    key_state.last_event = now_;
    return out + evaluate(k, key_state, c, now_, true, text);
  }

  // Time moves with no line (the timer).
  std::string tick(int64_t t) { return move_to(std::max<int64_t>(t, 0)); }

 private:
  struct Key {
    explicit Key(const window::WindowSpec& s) : win(s) {}
    WindowModel win;
    bool seen = false;
    int64_t since = 0, last_event = 0;
    bool pending = false;
    int64_t pending_since = 0;
    bool firing = false, announced = false, alerted = false;
    int64_t last_alert = 0;
    uint64_t held = 0;
    // sequences
    bool armed = false;
    int64_t armed_at = 0;
    Counts then_counts;
  };

  int64_t width() const { return r_.window_ms / r_.buckets; }
  window::WindowSpec spec() const { return {width(), r_.buckets, r_.events}; }
  bool watched() const { return !r_.then; }

  std::string move_to(int64_t t) {
    std::string out;
    if (now_ < 0) {
      now_ = t;
      if (!r_.keyed && watched()) {  // a rule without key watches from the run's first time
        Key& k = keys_.emplace("", Key(spec())).first->second;
        k.seen = true;
        k.since = t;
      }
      return out;
    }
    if (t <= now_) return out;
    const int64_t from = now_ / width(), to = t / width();
    now_ = t;
    if (!watched()) return out;
    for (int64_t b = from + 1; b <= to; ++b) out += check_all(b);
    return out;
  }

  // The boundary check at the start of bucket b: every known key, in key order.
  std::string check_all(int64_t b) {
    std::string out;
    const int64_t at = b * width();
    for (auto it = keys_.begin(); it != keys_.end();) {
      Key& k = it->second;
      if (!k.seen) {
        ++it;
        continue;
      }
      k.win.advance(at);
      out += evaluate(it->first, k, k.win.counts(), at, false, "");
      const bool kept = k.firing && k.announced && resolves();
      if (r_.keyed && r_.forget_ms > 0 && at - k.last_event >= r_.forget_ms && !kept) {
        it = keys_.erase(it);
        continue;
      }
      ++it;
    }
    return out;
  }

  bool resolves() const { return r_.resolve || r_.resolve_when.has_value(); }

  // The contract of a watched key, evaluated at `at`.
  std::string evaluate(const std::string& key, Key& k, const Counts& c, int64_t at, bool from_event,
                       const std::string& text) {
    const bool empty_holds = r_.when(Counts(r_.events, 0));
    const bool warm = !empty_holds || at / width() >= k.since / width() + r_.buckets;
    const bool holds = warm && r_.when(c);
    if (!holds) {
      k.pending = false;
      const bool clears = !r_.resolve_when || (*r_.resolve_when)(c);
      if (!k.firing || !clears) return "";
      const bool was_announced = k.announced;
      k.firing = k.announced = false;
      return was_announced && resolves() ? record("resolved", at, key, c, k.held, "") : "";
    }
    if (r_.for_ms > 0 && !k.firing) {
      if (!k.pending) {
        k.pending = true;
        k.pending_since = at;
      }
      if (at - k.pending_since < r_.for_ms) return "";  // pending
    }
    // A check announces an episode once; a line may alert again after the cooldown.
    if (!from_event && k.announced) return "";
    if (!k.alerted || at - k.last_alert >= r_.cooldown_ms) {
      k.firing = k.announced = k.alerted = true;
      k.last_alert = at;
      const uint64_t held = k.held;
      k.held = 0;
      return record("alert", at, key, c, held, from_event ? text : std::string());
    }
    if (!k.firing) {
      k.firing = true;  // a new episode inside the cooldown: not announced
      k.announced = false;
    }
    if (from_event) ++k.held;
    return "";
  }

  std::string sequence_line(const std::string& key, Key& k, uint64_t mask, const Counts& c, const std::string& text) {
    if (k.armed && now_ - k.armed_at > r_.within_ms) k.armed = false;
    if (!k.armed) {
      if (r_.when(c)) {
        k.armed = true;
        k.armed_at = now_;
        k.then_counts.assign(r_.events, 0);
      }
      return "";
    }
    for (uint32_t e = 0; e < r_.events; ++e)
      if (mask >> e & 1) ++k.then_counts[e];
    if (!(*r_.then)(k.then_counts)) return "";
    k.armed = false;
    if (k.alerted && now_ - k.last_alert < r_.cooldown_ms) {
      ++k.held;
      return "";
    }
    k.alerted = true;
    k.last_alert = now_;
    const uint64_t held = k.held;
    k.held = 0;
    return record("alert", now_, key, c, held, text);
  }

  std::string record(const std::string& type, int64_t at, const std::string& key, const Counts& c, uint64_t held,
                     const std::string& text) const {
    uint64_t total = 0;
    std::string counts;
    for (std::size_t i = 0; i < c.size(); ++i) {
      total += c[i];
      counts += (i ? "," : "") + std::to_string(c[i]);
    }
    std::string s = type + " t=" + std::to_string(at) + " " + r_.name + " key=" + key +
                    " count=" + std::to_string(total) + " counts=[" + counts + "] suppressed=" + std::to_string(held);
    if (!text.empty()) s += " |" + text + "|";
    return s + "\n";
  }

  WatchRuleModel r_;
  int64_t now_ = -1;
  std::map<std::string, Key> keys_;
};

}  // namespace swthrottle::test
