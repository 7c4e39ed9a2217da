#include "engine/distinct_window.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <new>

namespace swthrottle::engine {
namespace {

// A rule's condition read over the events' counts and, after them, the
// count of distinct values (counts[E]: `distinct`).
class WithDistinct final : public window::Condition {
 public:
  WithDistinct(const window::Condition* condition, uint64_t distinct, uint32_t events)
      : condition_(condition), distinct_(distinct), events_(events) {}
  bool holds(std::span<const uint64_t> counts) const override {
    std::array<uint64_t, 65> all;
    const std::size_t n = std::min<std::size_t>(counts.size(), events_);
    std::copy_n(counts.begin(), n, all.begin());
    all[n] = distinct_;
    return condition_->holds(std::span<const uint64_t>(all.data(), n + 1));
  }

 private:
  const window::Condition* condition_;
  uint64_t distinct_;
  uint32_t events_;
};

// The policy with both conditions reading the distinct count too.
struct DistinctPolicy {
  DistinctPolicy(const window::AlertPolicy& p, uint64_t distinct, uint32_t events)
      : condition(p.condition, distinct, events), clear(p.clear, distinct, events), policy(p) {
    policy.condition = &condition;
    if (p.clear != nullptr) policy.clear = &clear;
  }
  WithDistinct condition;
  WithDistinct clear;
  window::AlertPolicy policy;
};

}  // namespace

DistinctWindow::DistinctWindow(const window::WindowSpec& spec, window::Window* inner)
    : window::Window(spec), distinct_(spec), inner_(inner) {}

DistinctWindow::~DistinctWindow() { inner_->~Window(); }

std::size_t DistinctWindow::header_bytes() {
  constexpr std::size_t a = window::kWindowAlign;
  return (sizeof(DistinctWindow) + a - 1) / a * a;
}

std::size_t DistinctWindow::bytes_at(window::Mode mode, const window::WindowSpec& spec) {
  return header_bytes() + window::window_bytes_at(mode, spec);
}

window::Window* DistinctWindow::make_at(void* where, window::Mode mode, const window::WindowSpec& spec) {
  static_assert(alignof(DistinctWindow) <= window::kWindowAlign);
  window::Window* inner = window::make_window_at(static_cast<char*>(where) + header_bytes(), mode, spec);
  return new (where) DistinctWindow(spec, inner);
}

const WindowMaker& DistinctWindow::maker() {
  static const WindowMaker m{&DistinctWindow::bytes_at, &DistinctWindow::make_at};
  return m;
}

DistinctWindow::Outcome DistinctWindow::offer_distinct(int64_t t_ms, int64_t now_ms, uint64_t events,
                                                       std::optional<uint64_t> value, const window::AlertPolicy& policy,
                                                       std::span<uint64_t> counts_out) {
  std::lock_guard lock(mu_);
  distinct_.advance(std::max(now_ms, t_ms));
  // A late line adds no value (add() refuses it) and the inner window
  // counts none of its events: it changes nothing.
  if (value) distinct_.add(t_ms, *value);
  Outcome o;
  o.distinct = distinct_.count();
  const DistinctPolicy p(policy, o.distinct.value, spec_.events);
  o.alert = inner_->offer_alert(t_ms, now_ms, events, p.policy, counts_out);
  if (counts_out.size() > spec_.events) counts_out[spec_.events] = o.distinct.value;
  return o;
}

DistinctWindow::Outcome DistinctWindow::tick_distinct(int64_t now_ms, const window::AlertPolicy& policy,
                                                      std::span<uint64_t> counts_out) {
  std::lock_guard lock(mu_);
  distinct_.advance(now_ms);
  Outcome o;
  o.distinct = distinct_.count();
  const DistinctPolicy p(policy, o.distinct.value, spec_.events);
  o.alert = inner_->tick_alert(now_ms, p.policy, counts_out);
  if (counts_out.size() > spec_.events) counts_out[spec_.events] = o.distinct.value;
  return o;
}

window::AddResult DistinctWindow::add(int64_t t_ms, uint32_t event, uint64_t n) {
  std::lock_guard lock(mu_);
  distinct_.advance(t_ms);
  return inner_->add(t_ms, event, n);
}

void DistinctWindow::advance(int64_t now_ms) {
  std::lock_guard lock(mu_);
  distinct_.advance(now_ms);
  inner_->advance(now_ms);
}

void DistinctWindow::read(std::span<uint64_t> out) const {
  std::lock_guard lock(mu_);
  inner_->read(out.first(std::min<std::size_t>(out.size(), spec_.events)));
  if (out.size() > spec_.events) out[spec_.events] = distinct_.count().value;
}

int64_t DistinctWindow::now_ms() const {
  std::lock_guard lock(mu_);
  return inner_->now_ms();
}

window::ThrottleOutcome DistinctWindow::offer_throttle(int64_t t_ms, int64_t now_ms, uint64_t limit, uint32_t event,
                                                       window::LineEvents events, std::span<uint64_t> counts_out) {
  std::lock_guard lock(mu_);
  distinct_.advance(std::max(now_ms, t_ms));
  return inner_->offer_throttle(t_ms, now_ms, limit, event, events, counts_out);
}

window::Summary DistinctWindow::tick_throttle(int64_t now_ms, uint64_t limit, std::span<uint64_t> counts_out) {
  std::lock_guard lock(mu_);
  distinct_.advance(now_ms);
  return inner_->tick_throttle(now_ms, limit, counts_out);
}

window::Summary DistinctWindow::take_pending(std::span<uint64_t> counts_out) {
  std::lock_guard lock(mu_);
  return inner_->take_pending(counts_out);
}

window::AlertOutcome DistinctWindow::offer_alert(int64_t t_ms, int64_t now_ms, uint64_t events,
                                                 const window::AlertPolicy& policy, std::span<uint64_t> counts_out) {
  return offer_distinct(t_ms, now_ms, events, std::nullopt, policy, counts_out).alert;
}

window::AlertOutcome DistinctWindow::tick_alert(int64_t now_ms, const window::AlertPolicy& policy,
                                                std::span<uint64_t> counts_out) {
  return tick_distinct(now_ms, policy, counts_out).alert;
}

bool DistinctWindow::quiet() const {
  std::lock_guard lock(mu_);
  return inner_->quiet();
}

window::WindowState DistinctWindow::save() const {
  std::lock_guard lock(mu_);
  window::WindowState st = inner_->save();
  st.distinct = distinct_.save();
  return st;
}

void DistinctWindow::load(const window::WindowState& st) {
  std::lock_guard lock(mu_);
  inner_->load(st);
  if (st.now_ms >= 0) distinct_.advance(st.now_ms);
  distinct_.load(st.distinct);
}

}  // namespace swthrottle::engine
