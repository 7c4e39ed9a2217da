#include "delivery/chat_bodies.h"

#include <nlohmann/json.hpp>

namespace swthrottle::delivery {
namespace {

using nlohmann::ordered_json;

// Slack takes at most 3000 characters in a section's text and a context
// element's; Discord 2000 in content. The texts are cut shorter, so that
// the rest always fits.
constexpr std::size_t kTextChars = 1500;
constexpr std::size_t kTitleChars = 300;
constexpr std::size_t kDiscordChars = 2000;

std::string facts_line(const RecordView& v, std::string_view separator, bool escape) {
  std::string out;
  for (const auto& [name, value] : record_facts(v)) {
    if (!out.empty()) out += separator;
    out += name + " " + (escape ? slack_escaped(value) : value);
  }
  return out;
}

// `replace`: the fields are repaired already; this is the last guard.
std::string dump(const ordered_json& j) { return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

}  // namespace

std::string slack_escaped(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string slack_body(const RecordView& v) {
  const std::string title = slack_escaped(cut_text(record_title(v), kTitleChars));
  const std::string text = slack_escaped(cut_text(record_text(v), kTextChars));
  ordered_json section = {{"type", "section"}, {"text", {{"type", "mrkdwn"}, {"text", "*" + title + "*\n" + text}}}};
  ordered_json context = {
      {"type", "context"},
      {"elements",
       ordered_json::array({{{"type", "mrkdwn"}, {"text", cut_text(facts_line(v, " · ", true), kTextChars)}}})}};
  ordered_json body = ordered_json::object();
  body["text"] = cut_text(title + ": " + text, kTextChars);
  body["blocks"] = ordered_json::array({std::move(section), std::move(context)});
  return dump(body);
}

std::string discord_body(const RecordView& v) {
  std::string content = "**" + cut_text(record_title(v), kTitleChars) + "**\n" + cut_text(record_text(v), kTextChars);
  const std::string facts = facts_line(v, " · ", false);
  if (!facts.empty()) content += "\n" + facts;
  ordered_json body = ordered_json::object();
  body["content"] = cut_text(content, kDiscordChars);
  body["allowed_mentions"] = {{"parse", ordered_json::array()}};
  return dump(body);
}

std::string teams_body(const RecordView& v) {
  ordered_json facts = ordered_json::array();
  for (const auto& [name, value] : record_facts(v))
    facts.push_back({{"title", name}, {"value", cut_text(value, kTextChars)}});
  ordered_json card = ordered_json::object();
  card["$schema"] = "http://adaptivecards.io/schemas/adaptive-card.json";
  card["type"] = "AdaptiveCard";
  card["version"] = "1.2";
  card["body"] = ordered_json::array({
      {{"type", "TextBlock"},
       {"text", cut_text(record_title(v), kTitleChars)},
       {"weight", "Bolder"},
       {"size", "Medium"},
       {"wrap", true}},
      {{"type", "TextBlock"}, {"text", cut_text(record_text(v), kTextChars)}, {"wrap", true}},
      {{"type", "FactSet"}, {"facts", std::move(facts)}},
  });
  ordered_json attachment = ordered_json::object();
  attachment["contentType"] = "application/vnd.microsoft.card.adaptive";
  attachment["contentUrl"] = nullptr;
  attachment["content"] = std::move(card);
  ordered_json body = ordered_json::object();
  body["type"] = "message";
  body["attachments"] = ordered_json::array({std::move(attachment)});
  return dump(body);
}

}  // namespace swthrottle::delivery
