#include "app/deliveries.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "app/delivery_setup.h"
#include "config/duration.h"

namespace swthrottle::app {

namespace {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

// The pool's options from [delivery], the destinations given.
delivery::DeliveryOptions pool_options(const config::DeliverySettings& ds,
                                       std::vector<delivery::Destination> destinations) {
  delivery::DeliveryOptions o;
  o.destinations = std::move(destinations);
  o.timeout = std::chrono::milliseconds(ds.timeout_ms);
  o.retry.give_up_after_ms = ds.retry_for_ms;
  o.batch = ds.batch;
  o.alertmanager.labels = ds.labels;
  o.alertmanager.repost_ms = ds.repost_ms;
  o.host = host_name();
  return o;
}

}  // namespace

Result<Deliveries> Deliveries::start(const cli::Options& options, const config::RuleSet& rules,
                                     const std::string& state_path, Report report, const Clock& clock) {
  Deliveries d;
  const config::DeliverySettings& ds = rules.settings.delivery;
  auto destinations = destinations_of(options, rules);
  if (!destinations) return destinations.error();
  if (destinations->empty()) {
    // None now: an outbox an earlier run left records in is still opened,
    // to say that they wait there.
    struct stat st;
    const std::string journal = state_path + ".outbox";
    if (state_path.empty() || ::stat(journal.c_str(), &st) != 0 || st.st_size == 0) return d;
  }
  const bool none = destinations->empty();
  delivery::DeliveryOptions o = pool_options(ds, std::move(*destinations));
  d.drain_ms_ = ds.drain_ms;
  d.report_ = report;
  if (!state_path.empty()) {
    delivery::OutboxOptions oo;
    oo.max_pending = ds.outbox_max;
    oo.full = ds.outbox_drop_oldest ? delivery::OutboxOptions::Full::DropOldest : delivery::OutboxOptions::Full::Block;
    oo.report = report;
    auto ob = delivery::Outbox::open(state_path + ".outbox", state_path + ".dead", oo);
    if (!ob) return ob.error();
    d.outbox_ = std::move(*ob);
    if (d.outbox_->recovered().empty() && none) return Deliveries{};  // nothing to deliver
  }
  d.pool_ = std::make_unique<delivery::DeliveryPool>(std::move(o), d.outbox_.get(), std::move(report), clock);
  return d;
}

void Deliveries::submit(const std::vector<engine::Record>& records) {
  if (pool_) pool_->submit(records);
}

void Deliveries::unblock() {
  if (pool_) pool_->unblock();
}

void Deliveries::finish() {
  if (!pool_) return;
  pool_->drain(std::chrono::milliseconds(drain_ms_));
  // Stopped before counting: a request in flight when the drain ended
  // finishes first, so that the count is what the stats then say.
  pool_->stop();
  const delivery::DeliveryPool::Pending left = pool_->pending();
  lost_ = left.lost;
  if (outbox_) {
    const delivery::OutboxStats o = outbox_->flush();
    if (o.unrecorded > 0)
      report_(
          fmt::format("delivery: {} record{} done in this run {} still listed in the outbox ({}): the next run sends "
                      "{} again",
                      o.unrecorded, o.unrecorded == 1 ? "" : "s", o.unrecorded == 1 ? "is" : "are",
                      outbox_->last_error(), o.unrecorded == 1 ? "it" : "them"));
  }
  if (left.total() == 0) return;
  std::string fate;
  if (!outbox_) {
    fate = "; lost: no --state (exit 3)";
  } else if (left.lost == 0) {
    fate = "; kept in the outbox for the next run";
  } else {
    fate = fmt::format("; {} kept in the outbox for the next run, {} lost: the outbox did not take them (exit 3)",
                       left.kept, left.lost);
  }
  report_(fmt::format("delivery: {} record{} not delivered after {} ([delivery] drain){}", left.total(),
                      left.total() == 1 ? "" : "s", config::format_duration(drain_ms_), fate));
}

delivery::DeliveryStats Deliveries::stats() const {
  delivery::DeliveryStats s;
  if (!pool_) return s;
  s.destinations = pool_->stats();
  if (outbox_) s.outbox = outbox_->stats();
  return s;
}

bool Deliveries::lost_records() const {
  if (!pool_) return false;
  if (pool_->dead_letters() > 0) return true;
  // A record neither delivered nor kept in the outbox is lost: the same.
  if (lost_ > 0) return true;
  // Records a full outbox dropped (outbox_full = "drop-oldest") are dead letters too.
  return outbox_ && outbox_->stats().dead_letters > 0;
}

}  // namespace swthrottle::app
