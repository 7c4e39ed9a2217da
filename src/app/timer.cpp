// The timer thread: boundary checks at every bucket boundary under arrival
// time, even when no line comes (DESIGN.md §3); under log time, those a quiet
// followed log has reached (pipeline/quiet_time.h), and the report of a live
// input that has gone a minute without a timestamp (pipeline/stamp_watch.h);
// with --state, a save every state_save_every_ms (DESIGN.md §6), so a crash
// of a long run loses at most that; with fleet rules, the alerts the fleet
// thread claimed for batched rules, within 200 ms of the claim.
#include <algorithm>
#include <chrono>

#include "app/app.h"

namespace swthrottle::app {

bool App::needs_timer() const {
  return current_.load()->rules->settings.time == config::TimeSource::Arrival || state_.active() || live_ ||
         fleet_.connected();
}

void App::watch_stamps(pipeline::StampWatch& watch, bool on) {
  std::lock_guard lock(mu_);
  if (on) stamp_watches_.push_back(&watch);
  else stamp_watches_.erase(std::remove(stamp_watches_.begin(), stamp_watches_.end(), &watch), stamp_watches_.end());
}

// The newest log time a quiet followed input has reached (kNoStamp: none).
int64_t App::quiet_reached(const pipeline::Generation& g) {
  const int64_t quiet_after = g.rules->settings.quiet_after_ms;
  const int64_t steady = clock_.steady_ms();
  int64_t newest = pipeline::kNoStamp;
  std::lock_guard lock(mu_);
  for (const auto* q : quiet_) newest = std::max(newest, q->reached(steady, quiet_after));
  return newest;
}

void App::timer_loop() {
  constexpr int64_t kMaxWaitMs = 200;
  std::vector<engine::Record> records;
  int64_t next_save = clock_.steady_ms() + app_options_.state_save_every_ms;
  std::unique_lock lock(mu_);
  while (!timer_done_) {
    pipeline::Generation* g = current();
    const bool arrival = g->rules->settings.time == config::TimeSource::Arrival;
    int64_t wait = kMaxWaitMs;
    if (arrival) {
      const int64_t next = g->engine->next_boundary_ms();
      if (next != INT64_MAX) wait = std::clamp<int64_t>(arrival_.steady_at(next) - clock_.steady_ms(), 0, kMaxWaitMs);
    }
    if (state_.active()) wait = std::clamp<int64_t>(next_save - clock_.steady_ms(), 0, wait);
    clock_.wait_for(cv_, lock, wait, [this] { return timer_done_; });
    if (timer_done_) break;
    // Under mu_: a watch is not unregistered (nor its decider gone) meanwhile.
    for (pipeline::StampWatch* w : stamp_watches_) w->due(clock_.steady_ms());
    lock.unlock();
    {
      // Exclusive: a tick's records and a decider's line never interleave
      // (a resolve written after the alert of a line that came later).
      std::unique_lock order(order_);
      lock.lock();
      const bool done = timer_done_;  // finish() has begun: it writes or saves the rest
      lock.unlock();
      if (!done) {
        g = current();
        const int64_t now = arrival ? arrival_.now_ms() : quiet_reached(*g);
        if (now != pipeline::kNoStamp) {
          g->engine->tick(now, records);
          if (!records.empty()) emit(records);
        }
        if (fleet_.connected()) write_fleet_alerts();  // claimed by the fleet thread (batched rules)
        if (state_.active() && clock_.steady_ms() >= next_save) {
          state_.save(*g, last_log_ms_.load());
          next_save = clock_.steady_ms() + app_options_.state_save_every_ms;
        }
      }
    }
    lock.lock();
  }
}

}  // namespace swthrottle::app
