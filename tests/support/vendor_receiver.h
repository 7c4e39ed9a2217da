// VendorReceiver: an HttpReceiver (support/http_receiver.h) on 127.0.0.1
// that answers as a chat or paging service's API does, from the schema the
// vendor documents: its success status for a request it would take, its
// refusal (with the reasons, as the vendor words them in spirit) for one
// it would not. So a preset's request that Slack would refuse is refused
// here too: the delivery dead-letters it and the test sees it.
//
// What each checks (the vendors' documentation, as of this writing):
//   Slack incoming webhooks: a JSON object; "text" a non-empty string, or
//     "blocks"; each block a section (text: mrkdwn or plain_text, at most
//     3000 characters) or a context (elements: 1 to 10 text objects);
//     and, ours: no mention (<!channel>, <!here>, <@U…>, <#C…>) in any
//     text, which only an unescaped log line could make. 200 "ok"; 400
//     "invalid_payload" / "no_text".
//   Discord webhooks: a JSON object; "content" a string of 1 to 2000
//     characters; "allowed_mentions" an object whose "parse" is an array.
//     204; 400 with a JSON error.
//   Teams workflows: {"type": "message", "attachments": [{"contentType":
//     "application/vnd.microsoft.card.adaptive", "content": {"type":
//     "AdaptiveCard", "version": STRING, "body": [ELEMENT...]}}]}, each
//     element with a "type"; TextBlock's "text" a string; FactSet's "facts"
//     {title, value} strings. 202; 400.
//   PagerDuty Events API v2 (POST /v2/enqueue): "routing_key" a string of
//     32 characters; "event_action" trigger, acknowledge or resolve;
//     "dedup_key" a string of at most 255 (needed to resolve); a trigger's
//     "payload" with "summary" (1 to 1024 characters), "source" (not
//     empty), "severity" (critical, error, warning or info), and when
//     present "timestamp" a string, "custom_details" an object, "links"
//     [{href}]. 202 {"status":"success",...}; 400 {"status":"invalid event"}.
//   Opsgenie Alert API: "Authorization: GenieKey KEY" (401 else); create,
//     POST /v2/alerts: "message" 1 to 130 characters, "alias" at most 512,
//     "description" at most 15000, "details" an object of strings,
//     "source" at most 100, "entity" at most 512; close, POST
//     /v2/alerts/ALIAS/close?identifierType=alias: "source" at most 100,
//     "note" at most 25000. 202 {"result":"Request will be processed"};
//     422 else.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "support/http_receiver.h"

namespace swthrottle::test {

enum class Vendor { Slack, Discord, Teams, PagerDuty, Opsgenie };

// What the vendor would refuse in this request; empty: it takes it. `key`:
// PagerDuty's routing key, Opsgenie's API key the request must carry.
std::vector<std::string> vendor_problems(Vendor v, const ReceivedRequest& r, const std::string& key);

class VendorReceiver : public HttpReceiver {
 public:
  explicit VendorReceiver(Vendor v, std::string key = "");
  ~VendorReceiver();  // stops serving before the judge's state goes
  // Every problem of every request so far, "REQUEST#: problem".
  std::vector<std::string> problems() const;

 private:
  mutable std::mutex problems_mu_;
  std::vector<std::string> problems_;
  std::size_t seen_ = 0;
};

}  // namespace swthrottle::test
