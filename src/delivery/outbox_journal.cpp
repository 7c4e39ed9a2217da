#include "delivery/outbox_journal.h"

#include <cstdint>
#include <utility>

#include <nlohmann/json.hpp>

#include "config/http_url.h"
#include "util/json_bytes.h"

namespace swthrottle::delivery {
namespace {

using nlohmann::json;          // reading: member order does not matter
using nlohmann::ordered_json;  // writing: members in the documented order

// Compact, values as raw UTF-8. `strict` cannot throw: every string in an
// entry passed is_valid_utf8 (the rest went to base64), which is exactly what
// nlohmann's serializer accepts.
std::string dump_line(const ordered_json& j) {
  std::string s = j.dump(-1, ' ', false, ordered_json::error_handler_t::strict);
  s += '\n';
  return s;
}

ordered_json entry(const char* kind, ordered_json members) {
  ordered_json j = ordered_json::object();
  j[kind] = std::move(members);
  return j;
}

bool read_u32(const json& j, const char* name, uint32_t& out) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_number_unsigned()) return false;
  const auto v = it->get<uint64_t>();
  if (v > UINT32_MAX) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

// "to" and "kind": the destination's label and preset. An earlier version
// wrote "to" as "webhook URL" or "alertmanager URL", and no "kind".
bool read_destination(const json& e, JournalEntry& out) {
  Delivery& d = out.d;
  std::string to;
  if (auto it = e.find("to"); it != e.end() && !read_json_bytes(*it, to)) return false;
  auto kind = e.find("kind");
  if (kind != e.end()) {
    if (!kind->is_string()) return false;
    const std::optional<Preset> p = preset_named(kind->get<std::string>());
    if (!p) return false;
    d.kind = *p;
    d.label = std::move(to);
    return true;
  }
  for (Preset p : {Preset::Webhook, Preset::Alertmanager}) {
    const std::string prefix = std::string(to_string(p)) + " ";
    if (to.starts_with(prefix)) {
      d.kind = p;
      d.label = config::url_origin(std::string_view(to).substr(prefix.size()));
      out.legacy_to = true;
    }
  }
  return true;
}

// The members only an add has (its id, destination and attempts are read).
bool read_add(const json& e, JournalEntry& out) {
  Delivery& d = out.d;
  auto created = e.find("created");
  auto body = e.find("body");
  if (created == e.end() || !created->is_number_integer() || body == e.end() || !read_json_bytes(*body, d.body))
    return false;
  if (created->is_number_unsigned() && created->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return false;
  if (auto path = e.find("path"); path != e.end() && !read_json_bytes(*path, d.path)) return false;
  if (!read_destination(e, out)) return false;
  d.created_ms = created->get<int64_t>();
  return true;
}

}  // namespace

std::string add_line(const Delivery& d) {
  ordered_json e = ordered_json::object();
  e["id"] = json_bytes(d.id);
  e["dest"] = d.destination;
  e["to"] = json_bytes(d.label);
  e["kind"] = to_string(d.kind);
  if (!d.path.empty()) e["path"] = json_bytes(d.path);
  e["created"] = d.created_ms;
  e["attempts"] = d.attempts;
  e["body"] = json_bytes(d.body);
  return dump_line(entry("add", std::move(e)));
}

std::string done_line(const std::string& id, uint32_t destination) {
  ordered_json e = ordered_json::object();
  e["id"] = json_bytes(id);
  e["dest"] = destination;
  return dump_line(entry("done", std::move(e)));
}

std::string try_line(const Delivery& d) {
  ordered_json e = ordered_json::object();
  e["id"] = json_bytes(d.id);
  e["dest"] = d.destination;
  e["attempts"] = d.attempts;
  return dump_line(entry("try", std::move(e)));
}

std::optional<JournalEntry> parse_entry(std::string_view line) {
  const json j = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.size() != 1) return std::nullopt;
  const std::string& name = j.begin().key();
  const json& e = j.begin().value();
  JournalEntry out;
  if (name == "add") {
    out.kind = EntryKind::Add;
  } else if (name == "done") {
    out.kind = EntryKind::Done;
  } else if (name == "try") {
    out.kind = EntryKind::Try;
  } else {
    return std::nullopt;
  }
  if (!e.is_object()) return std::nullopt;
  auto id = e.find("id");
  if (id == e.end() || !read_json_bytes(*id, out.d.id) || !read_u32(e, "dest", out.d.destination)) return std::nullopt;
  if (out.kind == EntryKind::Done) return out;
  if (!read_u32(e, "attempts", out.d.attempts)) return std::nullopt;
  if (out.kind == EntryKind::Try) return out;
  if (!read_add(e, out)) return std::nullopt;
  return out;
}

JournalText read_journal(std::string_view text) {
  JournalText out;
  std::size_t line_no = 0;
  std::size_t bad_since_keep = 0;  // lines after keep_bytes that were not entries
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) break;  // torn: no final newline
    ++line_no;
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) continue;
    std::optional<JournalEntry> e = parse_entry(line);
    if (!e) {
      if (bad_since_keep++ == 0 && out.first_skipped_line == 0) out.first_skipped_line = line_no;
      continue;
    }
    out.skipped += bad_since_keep;
    out.lines += 1 + bad_since_keep;
    bad_since_keep = 0;
    out.keep_bytes = pos;
    out.legacy_to = out.legacy_to || e->legacy_to;
    out.entries.push_back(std::move(*e));
  }
  // Bad lines after the last entry are its torn tail, not skipped lines.
  if (out.skipped == 0) out.first_skipped_line = 0;
  return out;
}

}  // namespace swthrottle::delivery
