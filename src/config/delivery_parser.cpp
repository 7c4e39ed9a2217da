#include "config/delivery_parser.h"

#include <array>

#include <fmt/format.h>

#include "config/destination_parser.h"
#include "config/http_url.h"

namespace swthrottle::config {

MaybeError read_urls(const TomlReader& in, const toml::node& v, std::string_view key, std::vector<std::string>& out) {
  auto one = [&](const toml::node& n) -> MaybeError {
    if (!n.is_string()) return in.err(n, fmt::format("{} must be a URL or an array of URLs, not {}", key, describe(n)));
    const std::string url = n.as_string()->get();
    if (std::string why = http_url_problem(url); !why.empty()) return in.err(n, fmt::format("{}: {}", key, why));
    out.push_back(url);
    return std::nullopt;
  };
  if (const auto* arr = v.as_array()) {
    if (arr->empty()) return in.err(v, fmt::format("{} must name at least one URL", key));
    for (std::size_t i = 0; i < arr->size(); ++i)
      if (auto e = one(*arr->get(i))) return e;
    return std::nullopt;
  }
  return one(v);
}

std::string label_name_problem(std::string_view name) {
  const bool ok =
      !name.empty() && !(name[0] >= '0' && name[0] <= '9') && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      });
  if (!ok) return "a label name is [a-zA-Z_][a-zA-Z0-9_]*";
  if (name.starts_with("__")) return "names starting with __ are Alertmanager's own";
  return "";
}

MaybeError read_labels(const TomlReader& in, const toml::node& v, std::string_view where,
                       std::vector<std::pair<std::string, std::string>>& out) {
  const auto* lt = v.as_table();
  if (lt == nullptr) return in.err(v, fmt::format("{}s must be a table: labels = {{ team = \"ops\" }}", where));
  for (auto [lk, lv] : ordered(*lt)) {
    const std::string name(lk->str());
    if (std::string why = label_name_problem(name); !why.empty())
      return in.err(*lk, fmt::format("{} {}: {}", where, quote(name), why));
    if (!lv->is_string()) return in.err(*lv, fmt::format("{} {} must be a string", where, quote(name)));
    out.emplace_back(name, lv->as_string()->get());
  }
  return std::nullopt;
}

MaybeError parse_delivery(const TomlReader& in, const toml::node& node, DeliverySettings& d) {
  const auto* t = node.as_table();
  if (t == nullptr) return in.err(node, fmt::format("delivery must be a table ([delivery]), not {}", describe(node)));
  if (auto e = in.unknown_keys(*t, kDeliveryKeys, "[delivery]")) return e;
  const Pos at = pos_of(node.source());
  d.given = true;
  d.file = in.file();
  d.line = at.line;
  d.col = at.col;
  for (auto [k, v] : ordered(*t)) {
    const std::string key(k->str());
    if (key == "webhook" || key == "alertmanager") {
      if (auto e = read_urls(in, *v, "delivery " + key, key == "webhook" ? d.webhooks : d.alertmanagers)) return e;
    } else if (key == "timeout" || key == "retry_for" || key == "repost" || key == "drain") {
      auto ms = in.duration(*v, "delivery " + key);
      if (!ms) return ms.error();
      if (key == "timeout") d.timeout_ms = *ms;
      if (key == "retry_for") d.retry_for_ms = *ms;
      if (key == "repost") d.repost_ms = *ms;
      if (key == "drain") d.drain_ms = *ms;
    } else if (key == "batch" || key == "outbox_max") {
      const auto n = v->value<int64_t>();
      const int64_t hi = key == "batch" ? 1000 : 10'000'000;
      if (!v->is_integer() || !n || *n < 1 || *n > hi)
        return in.err(*v, fmt::format("delivery {} must be a whole number from 1 to {}", key, hi));
      (key == "batch" ? d.batch : d.outbox_max) = static_cast<std::size_t>(*n);
    } else if (key == "token_file" || key == "basic_auth_file") {
      if (!v->is_string() || v->as_string()->get().empty())
        return in.err(*v, fmt::format("delivery {} must be the path of a file", key));
      (key == "token_file" ? d.token_file : d.basic_auth_file) = v->as_string()->get();
    } else if (key == "outbox_full") {
      auto f = in.choose(*v, "delivery outbox_full", std::vector<std::string>{"block", "drop-oldest"});
      if (!f) return f.error();
      d.outbox_drop_oldest = *f == 1;
    } else if (key == "labels") {
      if (auto e = read_labels(in, *v, "delivery label", d.labels)) return e;
    } else if (key == "destination") {
      if (auto e = parse_destinations(in, *v, d.destinations)) return e;
    }
  }
  return std::nullopt;
}

}  // namespace swthrottle::config
