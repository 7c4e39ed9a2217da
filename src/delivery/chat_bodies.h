// The bodies chat presets post (man page: DELIVERY, "Presets"): Slack's
// incoming webhooks, Discord's webhooks, Teams' workflows. Built as JSON
// values from a RecordView; every text is within the service's limits.
#pragma once

#include <string>
#include <string_view>

#include "delivery/record_view.h"

namespace swthrottle::delivery {

// Slack: {"text": TITLE: TEXT, "blocks": [a section with the title and the
// text, a context with the facts]}, mrkdwn. `text` is what notifications
// show. Every inserted value is escaped for Slack (slack_escaped()).
std::string slack_body(const RecordView& v);

// Discord: {"content": "**TITLE**\nTEXT\nFACTS", "allowed_mentions":
// {"parse": []}}: at most 2000 characters, and no log line can ping
// @everyone or a role.
std::string discord_body(const RecordView& v);

// Teams (a workflow's "When a Teams webhook request is received"): a
// message with one Adaptive Card attachment, a title, the text and a
// FactSet.
std::string teams_body(const RecordView& v);

// `s` with Slack's control characters escaped: & < > as &amp; &lt; &gt;,
// so that a log line cannot mention <!channel> or make a link.
std::string slack_escaped(std::string_view s);

}  // namespace swthrottle::delivery
