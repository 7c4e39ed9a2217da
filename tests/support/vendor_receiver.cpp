#include "support/vendor_receiver.h"

#include <nlohmann/json.hpp>

namespace swthrottle::test {
namespace {

using nlohmann::json;

// Characters as the vendors count them (code points of UTF-8).
std::size_t chars(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

struct Check {
  std::vector<std::string> problems;
  void need(bool ok, const std::string& what) {
    if (!ok) problems.push_back(what);
  }
  // j[name] is a string of min to max characters.
  void string(const json& j, const char* name, std::size_t min, std::size_t max, bool required = true) {
    if (!j.contains(name)) {
      need(!required, std::string(name) + " is required");
      return;
    }
    if (!j[name].is_string()) return need(false, std::string(name) + " must be a string");
    const std::size_t n = chars(j[name].get<std::string>());
    need(n >= min && n <= max, std::string(name) + " must be " + std::to_string(min) + " to " + std::to_string(max) +
                                   " characters, not " + std::to_string(n));
  }
};

// Slack's mentions (<!channel>, <!here>, <@U123>, <#C123>, <!subteam^S1>):
// what a log line must never make.
void no_mention(Check& c, const std::string& text, const std::string& where) {
  for (const char* m : {"<!", "<@", "<#"})
    c.need(text.find(m) == std::string::npos, where + " mentions (" + m + "...>): unescaped");
}

void slack_text_object(Check& c, const json& t, const std::string& where) {
  if (!t.is_object()) return c.need(false, where + " must be a text object");
  c.need(t.value("type", "") == "mrkdwn" || t.value("type", "") == "plain_text", where + ".type must be mrkdwn");
  c.string(t, "text", 1, 3000);
  if (t.contains("text") && t["text"].is_string()) no_mention(c, t["text"], where + ".text");
}

void slack(Check& c, const json& b) {
  c.need(b.contains("text") || b.contains("blocks"), "no_text");
  if (b.contains("text")) {
    c.string(b, "text", 1, 40000);
    if (b["text"].is_string()) no_mention(c, b["text"], "text");
  }
  if (!b.contains("blocks")) return;
  if (!b["blocks"].is_array()) return c.need(false, "blocks must be an array");
  for (std::size_t i = 0; i < b["blocks"].size(); ++i) {
    const json& block = b["blocks"][i];
    const std::string where = "blocks[" + std::to_string(i) + "]";
    const std::string type = block.value("type", "");
    if (type == "section") {
      slack_text_object(c, block.value("text", json()), where + ".text");
    } else if (type == "context") {
      const json els = block.value("elements", json());
      c.need(els.is_array() && !els.empty() && els.size() <= 10, where + ".elements must be 1 to 10");
      if (els.is_array())
        for (std::size_t k = 0; k < els.size(); ++k)
          slack_text_object(c, els[k], where + ".elements[" + std::to_string(k) + "]");
    } else {
      c.need(false, where + ": unknown block type " + type);
    }
  }
}

void discord(Check& c, const json& b) {
  c.string(b, "content", 1, 2000);
  c.need(b.contains("allowed_mentions") && b["allowed_mentions"].is_object() &&
             b["allowed_mentions"].value("parse", json()).is_array(),
         "allowed_mentions.parse must be an array (else a log line pings @everyone)");
}

void teams(Check& c, const json& b) {
  c.need(b.value("type", "") == "message", "type must be message");
  const json atts = b.value("attachments", json());
  if (!atts.is_array() || atts.empty()) return c.need(false, "attachments must be a non-empty array");
  for (const json& a : atts) {
    c.need(a.value("contentType", "") == "application/vnd.microsoft.card.adaptive", "contentType must be adaptive");
    const json card = a.value("content", json());
    if (!card.is_object()) return c.need(false, "content must be an Adaptive Card");
    c.need(card.value("type", "") == "AdaptiveCard", "content.type must be AdaptiveCard");
    c.need(card.contains("version") && card["version"].is_string(), "content.version must be a string");
    const json body = card.value("body", json());
    if (!body.is_array()) return c.need(false, "content.body must be an array");
    for (const json& e : body) {
      const std::string type = e.value("type", "");
      c.need(!type.empty(), "every element needs a type");
      if (type == "TextBlock") c.need(e.contains("text") && e["text"].is_string(), "TextBlock.text must be a string");
      if (type == "FactSet") {
        c.need(e.value("facts", json()).is_array(), "FactSet.facts must be an array");
        for (const json& f : e.value("facts", json::array()))
          c.need(f.value("title", json()).is_string() && f.value("value", json()).is_string(),
                 "a fact is {title, value} strings");
      }
    }
  }
}

void pagerduty(Check& c, const json& b, const std::string& key) {
  c.string(b, "routing_key", 32, 32);
  c.need(b.value("routing_key", "") == key, "routing_key is not the integration's");
  const std::string action = b.value("event_action", "");
  c.need(action == "trigger" || action == "acknowledge" || action == "resolve", "event_action is invalid");
  c.string(b, "dedup_key", 1, 255, action != "trigger");
  if (action != "trigger") return;
  const json p = b.value("payload", json());
  if (!p.is_object()) return c.need(false, "payload is required for a trigger");
  c.string(p, "summary", 1, 1024);
  c.string(p, "source", 1, 100000);
  const std::string sev = p.value("severity", "");
  c.need(sev == "critical" || sev == "error" || sev == "warning" || sev == "info", "payload.severity is invalid");
  if (p.contains("timestamp")) c.need(p["timestamp"].is_string(), "payload.timestamp must be a string");
  if (p.contains("custom_details")) c.need(p["custom_details"].is_object(), "custom_details must be an object");
  if (b.contains("links"))
    for (const json& l : b["links"]) c.need(l.value("href", json()).is_string(), "a link needs an href");
}

void opsgenie(Check& c, const ReceivedRequest& r, const json& b, const std::string& key) {
  c.need(r.header("Authorization") == "GenieKey " + key, "Authorization must be GenieKey KEY");
  if (r.path == "/v2/alerts") {
    c.string(b, "message", 1, 130);
    c.string(b, "alias", 1, 512, false);
    c.string(b, "description", 0, 15000, false);
    c.string(b, "source", 0, 100, false);
    c.string(b, "entity", 0, 512, false);
    if (b.contains("details")) {
      c.need(b["details"].is_object(), "details must be an object");
      for (const auto& [k, v] : b["details"].items()) c.need(v.is_string(), "details." + k + " must be a string");
    }
    return;
  }
  const std::string prefix = "/v2/alerts/", suffix = "/close";
  const bool close = r.path.starts_with(prefix) && r.path.ends_with(suffix) && r.path.size() > prefix.size() + 6;
  c.need(close, "no such endpoint: " + r.path);
  c.need(r.query == "identifierType=alias", "close by alias needs identifierType=alias");
  c.string(b, "source", 0, 100, false);
  c.string(b, "note", 0, 25000, false);
}

Reply vendor_reply(Vendor v, const std::vector<std::string>& problems) {
  std::string all;
  for (const std::string& p : problems) all += (all.empty() ? "" : "; ") + p;
  const bool ok = problems.empty();
  switch (v) {
    case Vendor::Slack: return ok ? Reply(200, "", "ok") : Reply(400, "", "invalid_payload: " + all);
    case Vendor::Discord: return ok ? Reply(204) : Reply(400, "", json({{"message", all}, {"code", 50109}}).dump());
    case Vendor::Teams: return ok ? Reply(202) : Reply(400, "", all);
    case Vendor::PagerDuty:
      return ok ? Reply(202, "", R"({"status":"success","message":"Event processed"})")
                : Reply(400, "", json({{"status", "invalid event"}, {"errors", problems}}).dump());
    case Vendor::Opsgenie:
      return ok ? Reply(202, "", R"({"result":"Request will be processed","took":0.01,"requestId":"x"})")
                : Reply(422, "", json({{"message", all}}).dump());
  }
  return Reply(500);
}

}  // namespace

std::vector<std::string> vendor_problems(Vendor v, const ReceivedRequest& r, const std::string& key) {
  Check c;
  c.need(r.method == "POST", "method must be POST");
  c.need(r.header("Content-Type").value_or("").starts_with("application/json"), "Content-Type must be JSON");
  const json b = json::parse(r.body, nullptr, false);
  if (b.is_discarded() || !b.is_object()) {
    c.need(false, "the body is not a JSON object");
    return c.problems;
  }
  switch (v) {
    case Vendor::Slack: slack(c, b); break;
    case Vendor::Discord: discord(c, b); break;
    case Vendor::Teams: teams(c, b); break;
    case Vendor::PagerDuty: pagerduty(c, b, key); break;
    case Vendor::Opsgenie: opsgenie(c, r, b, key); break;
  }
  return c.problems;
}

VendorReceiver::VendorReceiver(Vendor v, std::string key) {
  judge([this, v, key](const ReceivedRequest& r) -> std::optional<Reply> {
    const std::vector<std::string> found = vendor_problems(v, r, key);
    {
      std::lock_guard lock(problems_mu_);
      ++seen_;
      for (const std::string& p : found) problems_.push_back(std::to_string(seen_) + ": " + p);
    }
    return vendor_reply(v, found);
  });
}

VendorReceiver::~VendorReceiver() { stop(); }

std::vector<std::string> VendorReceiver::problems() const {
  std::lock_guard lock(problems_mu_);
  return problems_;
}

}  // namespace swthrottle::test
