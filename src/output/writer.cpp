#include "output/writer.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <string_view>
#include <system_error>

#include "util/json.h"

namespace swthrottle::output {
namespace {

using engine::Record;
using engine::RecordType;

void append_uint(std::string& out, uint64_t v) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

// The engine always sets the rule of alerts, resolveds and summaries; this
// keeps a record without one renderable instead of crashing on it.
const config::Rule& rule_of(const Record& r) {
  static const config::Rule kNoRule;
  return r.rule ? *r.rule : kNoRule;
}

uint64_t count_at(const Record& r, std::size_t i) { return i < r.counts.size() ? r.counts[i] : 0; }

// --- JSON -----------------------------------------------------------------

void json_time(std::string& out, std::string_view field, bool has, int64_t ms) {
  out += field;
  if (has) {
    out += '"';
    append_rfc3339_ms(out, ms);
    out += '"';
  } else {
    out += "null";
  }
}

// "counts":{...}: every event of the rule, in rule order.
void json_counts(std::string& out, const Record& r, const config::Rule& rule) {
  out += ",\"counts\":{";
  for (std::size_t i = 0; i < rule.event_names.size(); ++i) {
    if (i > 0) out += ',';
    append_json_string(out, rule.event_names[i]);
    out += ':';
    append_uint(out, count_at(r, i));
  }
  out += '}';
}

// What a distinct or first-seen record says besides the counts: the
// previous window's counts (previous()), the distinct values (`distinct`),
// the new value (`new`). Nothing for other records.
void json_shape(std::string& out, const Record& r, const config::Rule& rule) {
  if (!r.previous.empty()) {
    out += ",\"previous\":{";
    for (std::size_t i = 0; i < rule.event_names.size(); ++i) {
      if (i > 0) out += ',';
      append_json_string(out, rule.event_names[i]);
      out += ':';
      append_uint(out, i < r.previous.size() ? r.previous[i] : 0);
    }
    out += '}';
  }
  if (r.has_distinct) {
    out += ",\"distinct\":";
    append_uint(out, r.distinct);
    if (r.distinct_estimated) out += ",\"estimated\":true";
  }
  if (r.has_value) {
    out += ",\"value\":";
    append_json_string(out, r.value);
  }
}

void render_json(std::string& out, const Record& r, std::string_view id) {
  out += '{';
  if (!id.empty()) {
    out += "\"id\":";
    append_json_string(out, id);
    out += ',';
  }
  out += "\"type\":\"";
  out += to_string(r.type);
  out += '"';
  json_time(out, ",\"time\":", r.has_time, r.time_ms);

  if (r.type == RecordType::Line) {
    out += ",\"line\":";
    append_json_string(out, r.line);
    if (r.rule) {
      out += ",\"rule\":";
      append_json_string(out, r.rule->name);
    }
    out += "}\n";
    return;
  }

  const config::Rule& rule = rule_of(r);
  out += ",\"rule\":";
  append_json_string(out, rule.name);
  out += ",\"key\":";
  append_json_string(out, r.key);
  out += ",\"window\":";
  append_json_string(out, rule.window_text);
  if (rule.threshold) {
    out += ",\"threshold\":";
    append_uint(out, *rule.threshold);
  } else {
    out += ",\"when\":";
    append_json_string(out, rule.when_text);
  }

  if (r.type == RecordType::Summary) {
    out += ",\"suppressed\":";
    append_uint(out, r.suppressed);
    json_time(out, ",\"first\":", true, r.first_ms);
    json_time(out, ",\"last\":", true, r.last_ms);
    json_counts(out, r, rule);  // last: the members before it are as they were without it
    out += "}\n";
    return;
  }

  out += ",\"count\":";
  append_uint(out, r.count);
  json_counts(out, r, rule);
  json_shape(out, r, rule);
  out += ",\"suppressed\":";
  append_uint(out, r.suppressed);
  if (r.type == RecordType::Alert && r.has_line) {
    out += ",\"line\":";
    append_json_string(out, r.line);
  }
  if (r.has_message) {
    out += ",\"message\":";
    append_json_string(out, r.message);
  }
  out += "}\n";
}

// --- text -----------------------------------------------------------------

void text_time(std::string& out, std::string_view field, bool has, int64_t ms) {
  out += field;
  if (has) {
    append_rfc3339_ms(out, ms);
  } else {
    out += '-';
  }
}

void text_condition(std::string& out, const config::Rule& rule) {
  if (rule.threshold) {
    out += " threshold=";
    append_uint(out, *rule.threshold);
  } else {
    out += " when=\"";
    append_text_escaped(out, rule.when_text);
    out += '"';
  }
  out += " window=";
  append_text_escaped(out, rule.window_text);
}

// " counts=a:1,b:2" for a rule of several events; nothing for one event,
// whose count is already said.
void text_counts(std::string& out, const Record& r, const config::Rule& rule) {
  if (rule.event_names.size() <= 1) return;
  out += " counts=";
  for (std::size_t i = 0; i < rule.event_names.size(); ++i) {
    if (i > 0) out += ',';
    append_text_escaped(out, rule.event_names[i]);
    out += ':';
    append_uint(out, count_at(r, i));
  }
}

// " previous=12" (or "a:1,b:2"), " distinct=6" ("~6": estimated), " value=\"...\"".
void text_shape(std::string& out, const Record& r, const config::Rule& rule) {
  if (!r.previous.empty()) {
    out += " previous=";
    if (rule.event_names.size() <= 1) {
      append_uint(out, r.previous[0]);
    } else {
      for (std::size_t i = 0; i < rule.event_names.size(); ++i) {
        if (i > 0) out += ',';
        append_text_escaped(out, rule.event_names[i]);
        out += ':';
        append_uint(out, i < r.previous.size() ? r.previous[i] : 0);
      }
    }
  }
  if (r.has_distinct) {
    out += r.distinct_estimated ? " distinct=~" : " distinct=";
    append_uint(out, r.distinct);
  }
  if (r.has_value) {
    out += " value=\"";
    append_text_escaped(out, r.value);
    out += '"';
  }
}

void render_text(std::string& out, const Record& r) {
  if (r.type == RecordType::Line) {
    out += r.line;  // byte-for-byte: a passed line is the user's data, not ours
    out += '\n';
    return;
  }

  const config::Rule& rule = rule_of(r);
  out += "swthrottle: ";
  out += to_string(r.type);
  out += ' ';
  append_text_escaped(out, rule.name);
  if (!r.key.empty()) {
    out += " key=";
    append_text_escaped(out, r.key);
  }

  if (r.type == RecordType::Summary) {
    out += " suppressed=";
    append_uint(out, r.suppressed);
    text_counts(out, r, rule);  // which events the suppressed lines were
    text_time(out, " first=", true, r.first_ms);
    text_time(out, " last=", true, r.last_ms);
    out += " window=";
    append_text_escaped(out, rule.window_text);
    text_time(out, " time=", r.has_time, r.time_ms);
    out += '\n';
    return;
  }

  out += " count=";
  append_uint(out, r.count);
  text_counts(out, r, rule);
  text_shape(out, r, rule);
  text_condition(out, rule);
  if (r.type == RecordType::Alert) {
    out += " suppressed=";
    append_uint(out, r.suppressed);
  }
  text_time(out, " time=", r.has_time, r.time_ms);
  if (r.type == RecordType::Alert) {
    if (r.has_message) {
      out += ": ";
      append_text_escaped(out, r.message);
    } else if (r.has_line) {
      out += ": ";
      append_text_escaped(out, r.line);
    }
  }
  out += '\n';
}

}  // namespace

void render(std::string& out, const Record& r, Format f) {
  if (f == Format::Json) {
    render_json(out, r, {});
  } else {
    render_text(out, r);
  }
}

void render_with_id(std::string& out, const Record& r, std::string_view id) { render_json(out, r, id); }

FdWriter::FdWriter(int fd, Format f) : fd_(fd), format_(f) {}

bool FdWriter::write(const Record& r) {
  if (closed_) return false;
  buf_.clear();
  render(buf_, r, format_);

  std::string_view rest = buf_;
  while (!rest.empty()) {
    if (abandoned_.load(std::memory_order_acquire)) {
      closed_ = true;  // quietly, as for EPIPE: the run is stopping
      return false;
    }
    const ssize_t n = ::write(fd_, rest.data(), rest.size());
    if (n > 0) {
      rest.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    int err = n < 0 ? errno : EIO;
    if (err == EINTR) continue;  // abandon()'s signal, or another: looked at above
    if (err == EAGAIN || err == EWOULDBLOCK) {
      // An inherited non-blocking stdout: wait for room rather than drop the
      // rest of the record; in slices, so that abandon() is seen.
      pollfd pfd{fd_, POLLOUT, 0};
      if (::poll(&pfd, 1, 100) >= 0 || errno == EINTR) continue;
      err = errno;
    }
    closed_ = true;
    if (err != EPIPE) error_ = std::generic_category().message(err);
    return false;
  }
  return true;
}

}  // namespace swthrottle::output
