#include "app/delivery_setup.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace swthrottle::app {

namespace {

using delivery::Destination;
using delivery::DestinationKind;

// A secret file's text, without the final newline an editor adds.
Result<std::string> read_secret(const std::string& path, std::string_view what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Error{path, 0, 0, fmt::format("cannot read the {} file", what)};
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  if (s.empty()) return Error{path, 0, 0, fmt::format("the {} file is empty", what)};
  if (s.find('\n') != std::string::npos) return Error{path, 0, 0, fmt::format("the {} file must hold one line", what)};
  return s;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

void add(std::vector<Destination>& out, DestinationKind kind, const std::string& url, bool every_rule) {
  for (Destination& d : out) {
    if (d.kind == kind && d.url == url) {
      d.every_rule = d.every_rule || every_rule;
      return;
    }
  }
  Destination d;
  d.kind = kind;
  d.url = url;
  d.every_rule = every_rule;
  out.push_back(std::move(d));
}

}  // namespace

std::vector<Destination> destinations_of(const cli::Options& options, const config::RuleSet& rules) {
  std::vector<Destination> out;
  const config::DeliverySettings& ds = rules.settings.delivery;
  for (const auto& u : options.webhooks) add(out, DestinationKind::Webhook, u, true);
  for (const auto& u : ds.webhooks) add(out, DestinationKind::Webhook, u, true);
  for (const auto& u : options.alertmanagers) add(out, DestinationKind::Alertmanager, u, true);
  for (const auto& u : ds.alertmanagers) add(out, DestinationKind::Alertmanager, u, true);
  for (const config::Rule& r : rules.rules) {
    for (const auto& u : r.webhooks) add(out, DestinationKind::Webhook, u, false);
    for (const auto& u : r.alertmanagers) add(out, DestinationKind::Alertmanager, u, false);
  }
  return out;
}

std::vector<std::string> urls_not_started(const config::RuleSet& rules, const std::vector<std::string>& started) {
  std::vector<std::string> out;
  auto note = [&](const std::string& target) {
    if (std::find(started.begin(), started.end(), target) == started.end() &&
        std::find(out.begin(), out.end(), target) == out.end())
      out.push_back(target);
  };
  // [delivery]'s own destinations too: a reload cannot add those either.
  for (const std::string& u : rules.settings.delivery.webhooks) note("webhook " + u);
  for (const std::string& u : rules.settings.delivery.alertmanagers) note("alertmanager " + u);
  for (const config::Rule& r : rules.rules) {
    for (const auto* urls : {&r.webhooks, &r.alertmanagers}) {
      const std::string kind = urls == &r.webhooks ? "webhook " : "alertmanager ";
      for (const std::string& u : *urls) {
        const std::string target = kind + u;
        if (std::find(started.begin(), started.end(), target) == started.end() &&
            std::find(out.begin(), out.end(), target) == out.end())
          out.push_back(target);
      }
    }
  }
  return out;
}

Result<DeliverySetup> start_delivery(const cli::Options& options, const config::RuleSet& rules,
                                     const std::string& state_path, delivery::DeliveryPool::Report report,
                                     const Clock& clock) {
  DeliverySetup setup;
  const config::DeliverySettings& ds = rules.settings.delivery;
  delivery::DeliveryOptions o;
  o.destinations = destinations_of(options, rules);
  if (o.destinations.empty()) {
    // None now: but what an earlier run decided for a destination and did
    // not deliver is still delivered there (the outbox says where).
    struct stat st;
    const std::string journal = state_path + ".outbox";
    if (state_path.empty() || ::stat(journal.c_str(), &st) != 0 || st.st_size == 0) return setup;
  }

  // Secrets for webhooks: the environment first, then [delivery]'s files.
  std::vector<std::string> headers;
  std::string basic;
  if (const char* t = env("SWTHROTTLE_WEBHOOK_TOKEN")) {
    headers.push_back(std::string("Authorization: Bearer ") + t);
  } else if (!ds.token_file.empty()) {
    auto token = read_secret(ds.token_file, "[delivery] token_file");
    if (!token) return token.error();
    headers.push_back("Authorization: Bearer " + *token);
  }
  if (const char* b = env("SWTHROTTLE_WEBHOOK_BASIC_AUTH")) {
    basic = b;
  } else if (!ds.basic_auth_file.empty()) {
    auto pair = read_secret(ds.basic_auth_file, "[delivery] basic_auth_file");
    if (!pair) return pair.error();
    basic = *pair;
  }
  if (!basic.empty() && basic.find(':') == std::string::npos)
    return Error{"", 0, 0, "the webhook basic auth must be user:password"};
  for (Destination& d : o.destinations) {
    if (d.kind != DestinationKind::Webhook) continue;
    d.headers = headers;
    d.basic_auth = basic;
  }
  o.timeout = std::chrono::milliseconds(ds.timeout_ms);
  o.retry.give_up_after_ms = ds.retry_for_ms;
  o.batch = ds.batch;
  o.alertmanager.labels = ds.labels;
  o.alertmanager.repost_ms = ds.repost_ms;
  setup.drain_ms = ds.drain_ms;

  if (!state_path.empty()) {
    delivery::OutboxOptions oo;
    oo.max_pending = ds.outbox_max;
    oo.full = ds.outbox_drop_oldest ? delivery::OutboxOptions::Full::DropOldest : delivery::OutboxOptions::Full::Block;
    auto ob = delivery::Outbox::open(state_path + ".outbox", state_path + ".dead", oo);
    if (!ob) return ob.error();
    setup.outbox = std::move(*ob);
    const std::size_t n = setup.outbox->recovered().size();
    if (n > 0) report(fmt::format("delivery: {} records the last run did not deliver are sent first", n));
    if (n == 0 && o.destinations.empty()) return DeliverySetup{};  // nothing to deliver at all
  }
  setup.pool = std::make_unique<delivery::DeliveryPool>(std::move(o), setup.outbox.get(), std::move(report), clock);
  return setup;
}

}  // namespace swthrottle::app
