// Engine: per line, matched events -> keys -> window decisions -> Records
// (DESIGN.md §3). Pure: no I/O, no clock; time comes in with every call.
//
// Thread-safety: offer(), tick() and finish() may be called from several
// deciders at once (one per input, DESIGN.md §3 "Concurrency"); each call's records
// come back in the order they must be written. For one input, calls are made
// in input order and the records are then exactly those of DESIGN.md §3.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/rules.h"
#include "engine/boundary_memo.h"
#include "engine/count_observer.h"
#include "engine/decision.h"
#include "engine/engine_state.h"
#include "engine/fleet_link.h"
#include "engine/keymap.h"
#include "engine/record.h"
#include "engine/stats.h"
#include "match/matcher.h"
#include "window/window.h"

namespace swthrottle::engine {

class WindowGroup;

struct EngineOptions {
  bool passthrough = false;
  bool all_captures = false;  // the Matcher was made with all_captures (--explain)
};

// One line to decide. t_ms is meaningful only when timed.
struct LineEvent {
  std::string_view text;
  bool timed = true;  // false: time = log and no timestamp seen yet on this input
  int64_t t_ms = 0;
};

// What --explain shows of one rule hit (cli/explain.h phrases it).
struct ExplainEntry {
  uint32_t rule = 0;
  uint64_t events = 0;
  std::vector<std::pair<std::string, std::string>> captures;  // name, value
  std::string key;
  std::vector<uint64_t> counts;  // after the decision (throttle: passed lines; alert: per event)
  Decision decision;
};

// What --explain shows of one line that matched at least one rule.
struct ExplainedLine {
  const config::RuleSet* rules = nullptr;  // the rules that decided it
  std::string_view input;                  // as shown: "(standard input)" for "-"
  uint64_t line_no = 0;
  std::string_view text;
  bool timed = false;  // false: no timestamp seen yet
  int64_t t_ms = 0;
  const std::vector<ExplainEntry>* entries = nullptr;
};

struct RuleState;
struct Hit;

class Engine {
 public:
  Engine(const config::RuleSet& rules, const EngineOptions& options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Decides one line given its match result. `out` is cleared, then gets the
  // records in the order to write them. With `explain`, one entry per rule hit.
  // With a `memo` (the caller's own), a line whose time crosses no bucket
  // boundary skips the per-rule boundary arithmetic.
  void offer(const LineEvent& line, const match::MatchResult& m, std::vector<Record>& out,
             std::vector<ExplainEntry>* explain = nullptr, BoundaryMemo* memo = nullptr);

  // Moves now to now_ms (never back) and runs the boundary checks of every
  // rule whose bucket boundary that crosses: arrival-time timers call this.
  void tick(int64_t now_ms, std::vector<Record>& out, BoundaryMemo* memo = nullptr);

  // End of input: the pending summary of every throttle rule+key.
  void finish(std::vector<Record>& out);

  // --state: the windows of every rule (exact when no decider is running).
  EngineState save_state() const;
  // Into a fresh engine: rules are matched by name and fingerprint
  // (config::fingerprint(), rule_identity.h); a rule whose definition changed
  // starts fresh. Returns the names of those rules.
  std::vector<std::string> load_state(const EngineState& state);
  // SIGHUP: keep the windows (and stats) of `old` for every rule whose kind,
  // events, window and buckets did not change, nor whether it has a key
  // (DESIGN.md §6; config::windows_carry_over(), rule_identity.h; not the
  // fingerprint), and take over its "now". A rule that starts fresh still
  // reports what its old windows held back: those summaries come back in
  // `flushed`, to be written. Returns the names of the rules that start fresh.
  std::vector<std::string> adopt(const Engine& old, std::vector<Record>& flushed);

  // Rules with `fleet` ask `link` (null: they decide alone, as rules without
  // it). Set before the first offer(); the link outlives the engine.
  void attach_fleet(FleetLink* link) { fleet_ = link; }

  // `swthrottle backtest`: told the window count of every counted line. Set
  // before the first offer(); the observer outlives the engine's use.
  void observe(CountObserver* observer);

  // The alerts the fleet claimed for batched rules since the last call, as
  // records (written by the App's timer). `claims` holds their lines: keep
  // it until the records are written.
  void fleet_alerts(std::vector<FleetClaim>& claims, std::vector<Record>& out);

  // Newest time seen, or -1.
  int64_t now_ms() const { return now_.load(); }
  // Earliest time at which a tick() could produce a record: the next bucket
  // boundary of any rule after now (INT64_MAX when nothing can happen).
  int64_t next_boundary_ms() const;

  const config::RuleSet& rules() const { return rules_; }
  const GlobalStats& stats() const { return *stats_; }
  GlobalStats& stats() { return *stats_; }
  const RuleStats& rule_stats(std::size_t r) const;
  std::size_t key_count(std::size_t r) const;

 private:
  // What one line's hits leave for the records written after the boundary
  // checks (DESIGN.md §3, "What is written").
  struct LineRecords;
  // Per-call scratch of offer(): the key, counts and template fields.
  struct Scratch;
  // The slots this line's rules that share key maps found (backtest).
  struct RecentSlots;

  // Moves now to the line's time; the boundary-check records go to out.
  int64_t advance(const LineEvent& line, std::vector<Record>& out, BoundaryMemo* memo);
  void boundary_checks(int64_t old_now, int64_t new_now, std::vector<Record>& out, BoundaryMemo* memo);
  int64_t next_boundary_after(int64_t now) const;
  void check_rule(RuleState& rs, int64_t now, std::vector<Record>& out);
  // One rule hit of the line: untimed, a backtest copy, or decided by its rule's logic.
  void decide_hit(const match::RuleHit& hit, const LineEvent& line, const match::MatchResult& m, int64_t now,
                  Scratch& s, LineRecords& lr, std::vector<Record>& out, ExplainEntry* ex);
  Decision decide_timed(RuleState& rs, uint64_t events, const LineEvent& line, int64_t now, Scratch& s, LineRecords& lr,
                        std::vector<Record>& out, ExplainEntry* ex);
  // The line itself (if written) between the summaries and the alerts.
  void write_line(const LineEvent& line, int64_t now, LineRecords& lr, std::vector<Record>& out);
  void flush_evicted(RuleState& rs, const SlotRef& evicted, int64_t now, std::vector<Record>& out);

  // --- key sharing, for `swthrottle backtest` (shared_keys.cpp) ---
  // The key's slot for a keyed rule's line (its map's get(), or for a rule
  // sharing its map, the slot `recent` holds for that map when it is the
  // key's); keys created and evicted are counted and flushed for every rule
  // of the map.
  SlotRef key_slot(RuleState& rs, std::string_view key, int64_t now, RecentSlots& recent, std::vector<Record>& out);
  // every_keyed: every keyed rule's map becomes a WindowGroup, with the observer's word per key.
  void share_keys(bool every_keyed);
  static std::atomic<uint32_t>* memo_of(const RuleState& rs, const SlotRef& slot);
  // The one seam between a decision and what a backtest watches of it: the
  // rule's logic decides the hit, then the AlertRiders on its window decide
  // on the counts its line made (under the group's riders_mutex(), as on
  // windows of their own) and the CountObserver is told the count.
  Decision offer_watched(RuleState& rs, Hit& hit, const SlotRef& slot);
  // The AlertRiders on `host`'s window step on the counts its line made;
  // true when any of them is firing. Under the group's riders_mutex().
  bool offer_riders(RuleState& host, WindowGroup& group, const Decision& d, Hit& hit, std::vector<Record>& alerts);
  // The boundary check of a rider: its firing keys that resolve.
  void check_riders(RuleState& rs, int64_t now, std::vector<Record>& out);
  // A rule's window in a key's slot (a rider: the window it rides on).
  static window::Window& window_of(const RuleState& rs, const Slot& slot);
  // --state: a key's window as the rule's own (a rider's: its alert state on the counts it rides on).
  static window::WindowState saved_window(const RuleState& rs, const Slot& slot);
  static void load_rider(const RuleState& rs, const Slot& slot, const window::WindowState& st);
  // What a rule's windows held back, as records: they go (their rule was removed or changed).
  static void take_all_pending(RuleState& rs, int64_t then, std::vector<Record>& flushed);

  const config::RuleSet& rules_;
  EngineOptions options_;
  std::vector<std::unique_ptr<RuleState>> states_;
  std::atomic<int64_t> now_{-1};
  FleetLink* fleet_ = nullptr;
  CountObserver* observer_ = nullptr;
  std::shared_ptr<GlobalStats> stats_ = std::make_shared<GlobalStats>();  // shared on adopt()
};

}  // namespace swthrottle::engine
