#include "app/delivery_setup.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "config/http_url.h"

namespace swthrottle::app {

namespace {

using delivery::Destination;
using delivery::Preset;

// Where the vendors take requests when a destination gives no url.
constexpr const char* kPagerDutyEvents = "https://events.pagerduty.com/v2/enqueue";
constexpr const char* kOpsgenieApi = "https://api.opsgenie.com";

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

void add(std::vector<Destination>& out, Preset preset, const std::string& url, bool every_rule) {
  for (Destination& d : out) {
    if (d.preset == preset && d.url == url) {
      d.every_rule = d.every_rule || every_rule;
      return;
    }
  }
  Destination d;
  d.preset = preset;
  d.url = url;
  d.every_rule = every_rule;
  out.push_back(std::move(d));
}

// --webhook, --alertmanager, [delivery]'s and the rules' own URLs.
std::vector<Destination> unnamed(const cli::Options& options, const config::RuleSet& rules) {
  std::vector<Destination> out;
  const config::DeliverySettings& ds = rules.settings.delivery;
  for (const auto& u : options.webhooks) add(out, Preset::Webhook, u, true);
  for (const auto& u : ds.webhooks) add(out, Preset::Webhook, u, true);
  for (const auto& u : options.alertmanagers) add(out, Preset::Alertmanager, u, true);
  for (const auto& u : ds.alertmanagers) add(out, Preset::Alertmanager, u, true);
  for (const config::Rule& r : rules.rules) {
    for (const auto& u : r.webhooks) add(out, Preset::Webhook, u, false);
    for (const auto& u : r.alertmanagers) add(out, Preset::Alertmanager, u, false);
  }
  return out;
}

// A named destination as its table gives it, secrets not read yet.
Destination named(const config::DestinationSpec& s) {
  Destination d;
  d.preset = s.preset;
  d.name = s.name;
  d.url = s.url;
  if (d.url.empty() && s.url_file.empty())
    d.url = s.preset == Preset::PagerDuty ? kPagerDutyEvents : s.preset == Preset::Opsgenie ? kOpsgenieApi : "";
  d.rules = s.rules;
  d.every_rule = s.rules.empty();
  d.body = s.body;
  return d;
}

// url_file, key_file and the header files of a named destination.
std::optional<Error> read_secrets(const config::DestinationSpec& s, Destination& d) {
  const std::string what = fmt::format("destination \"{}\" ", s.name);
  if (!s.url_file.empty()) {
    auto url = read_secret(s.url_file, what + "url_file");
    if (!url) return url.error();
    // The message names no more of the URL than its origin: it is the secret.
    if (std::string why = config::http_url_problem(*url); !why.empty()) return Error{s.url_file, 0, 0, why};
    d.url = std::move(*url);
  }
  if (!s.key_file.empty()) {
    auto key = read_secret(s.key_file, what + "key_file");
    if (!key) return key.error();
    d.key = std::move(*key);
  }
  for (const config::HeaderSpec& h : s.headers) {
    std::string value = h.value;
    if (!h.file.empty()) {
      auto v = read_secret(h.file, what + "header " + h.name);
      if (!v) return v.error();
      value = h.prefix + *v;
    }
    d.headers.push_back(h.name + ": " + value);
  }
  return std::nullopt;
}

// Secrets of the unnamed webhooks: the environment first, then [delivery]'s
// files. Never sent to a named destination (a chat service must not get
// the token of another receiver).
std::optional<Error> webhook_secrets(const config::DeliverySettings& ds, std::vector<Destination>& out) {
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
  for (Destination& d : out) {
    if (d.preset != Preset::Webhook || !d.name.empty()) continue;
    d.headers = headers;
    d.basic_auth = basic;
  }
  return std::nullopt;
}

std::vector<Destination> without_secrets(const cli::Options& options, const config::RuleSet& rules) {
  std::vector<Destination> out = unnamed(options, rules);
  for (const config::DestinationSpec& s : rules.settings.delivery.destinations) out.push_back(named(s));
  return out;
}

}  // namespace

Result<std::vector<Destination>> destinations_of(const cli::Options& options, const config::RuleSet& rules) {
  std::vector<Destination> out = without_secrets(options, rules);
  const auto& specs = rules.settings.delivery.destinations;
  for (Destination& d : out) {
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const auto& s) { return s.name == d.name; });
    if (d.name.empty() || spec == specs.end()) continue;
    if (auto e = read_secrets(*spec, d)) return *e;
  }
  if (auto e = webhook_secrets(rules.settings.delivery, out)) return *e;
  delivery::unique_labels(out);
  return out;
}

std::vector<std::string> destinations_not_started(const cli::Options& options, const config::RuleSet& rules,
                                                  const std::vector<delivery::DestinationStats>& started) {
  std::vector<Destination> next = without_secrets(options, rules);
  delivery::unique_labels(next);
  std::vector<std::string> out;
  for (const Destination& d : next) {
    const uint32_t n = d.number();
    if (std::none_of(started.begin(), started.end(), [&](const auto& s) { return s.number == n; }))
      out.push_back(d.label);
  }
  return out;
}

}  // namespace swthrottle::app
