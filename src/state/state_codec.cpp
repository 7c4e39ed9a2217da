#include "state/state_codec.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "state/state_validation.h"
#include "util/base64.h"
#include "util/json.h"
#include "util/json_bytes.h"
#include "util/utf8.h"

namespace swthrottle::state {
namespace {

using engine::EngineState;
using engine::RuleWindows;
using nlohmann::json;          // reading: member order does not matter
using nlohmann::ordered_json;  // writing: members in the documented order
using window::WindowState;

// ---------------------------------------------------------------- writing

// A value's hash (`distinct`, `new`): 16 hex digits, a string, so that JSON
// readers whose numbers are doubles read it exactly too.
std::string hash_text(uint64_t h) { return fmt::format("{:016x}", h); }

// A window's distinct values (a rule with `distinct`).
ordered_json distinct_json(const window::DistinctState& d) {
  ordered_json j = ordered_json::object();
  ordered_json exact = ordered_json::array();
  for (const auto& s : d.exact) exact.push_back(ordered_json::array({hash_text(s.hash), s.bucket}));
  j["exact"] = std::move(exact);
  if (d.overflow_bucket >= 0) {  // estimating
    j["overflow_bucket"] = d.overflow_bucket;
    ordered_json sketches = ordered_json::array();
    for (const auto& k : d.sketches) {
      std::string b64;
      append_base64(b64, std::string_view(reinterpret_cast<const char*>(k.registers.data()), k.registers.size()));
      sketches.push_back(ordered_json::array({k.bucket, std::move(b64)}));
    }
    j["sketches"] = std::move(sketches);
  }
  return j;
}

// What a rule with `new` remembers.
ordered_json seen_json(const engine::SeenValues& v) {
  ordered_json j = ordered_json::object();
  j["learn_until_ms"] = v.learn_until_ms;
  ordered_json values = ordered_json::array();
  for (const auto& x : v.values) values.push_back(ordered_json::array({hash_text(x.hash), x.last_ms}));
  j["values"] = std::move(values);
  return j;
}

// Compact, with the values as raw UTF-8. `strict` never throws here: every
// string we put into a document passed is_valid_utf8 (the rest went to
// base64), which accepts exactly what nlohmann's serializer accepts. Were the
// two ever to disagree, a save would fail loudly rather than write a string
// that reads back as different bytes (the `replace` handler's U+FFFD).
std::string dump(const ordered_json& j) { return j.dump(-1, ' ', false, ordered_json::error_handler_t::strict); }

// engine::WatchedKey, members in this order; then_counts only when armed.
ordered_json watched(const engine::WatchedKey& w) {
  ordered_json j = ordered_json::object();
  j["since_ms"] = w.since_ms;
  j["last_event_ms"] = w.last_event_ms;
  j["pending_since_ms"] = w.pending_since_ms;
  j["armed_at_ms"] = w.armed_at_ms;
  if (!w.then_counts.empty()) j["then_counts"] = w.then_counts;
  j["firing"] = w.firing;
  j["announced"] = w.announced;
  j["alerted"] = w.alerted;
  j["last_alert_ms"] = w.last_alert_ms;
  j["held_back"] = w.held_back;
  return j;
}

// Dumps windows one at a time into one object that is built once: every
// window has the same members in the same order, so only the values change.
// Not rebuilding the ~15 nodes of each window made a save of 100 000 keys
// about 1.5x faster (nlohmann is still slower than the hand-written writer
// was, ~2x; a save runs on the timer thread, every few seconds).
class WindowWriter {
 public:
  WindowWriter() {
    for (const char* name :
         {"key", "now_ms", "buckets", "pending", "firing", "announced", "alerted", "last_alert_ms", "alert_suppressed"})
      j_[name] = nullptr;
    for (const char* name : {"suppressed", "first_ms", "last_ms"}) j_["pending"][name] = nullptr;
  }

  void append(std::string& out, const RuleWindows::Keyed& k) {
    const WindowState& w = k.window;
    j_["key"] = json_bytes(k.key);
    j_["now_ms"] = w.now_ms;
    ordered_json& buckets = j_["buckets"];
    buckets = ordered_json::array();
    for (const WindowState::Bucket& b : w.buckets) buckets.push_back(ordered_json::array({b.bucket, b.counts}));
    ordered_json& pending = j_["pending"];
    pending["suppressed"] = w.pending.suppressed;
    pending["first_ms"] = w.pending.first_ms;
    pending["last_ms"] = w.pending.last_ms;
    // Per-event counts of the pending lines: only a multi-event throttle's,
    // so every other window's text is as it was before they existed.
    if (w.pending_counts.empty()) {
      pending.erase("counts");
    } else {
      pending["counts"] = w.pending_counts;
    }
    j_["firing"] = w.firing;
    j_["announced"] = w.announced;
    j_["alerted"] = w.alerted;
    j_["last_alert_ms"] = w.last_alert_ms;
    j_["alert_suppressed"] = w.alert_suppressed;
    // Distinct values: only a `distinct` rule's window has some.
    if (w.distinct.exact.empty() && w.distinct.overflow_bucket < 0) j_.erase("distinct");
    else j_["distinct"] = distinct_json(w.distinct);
    // A watched rule's or a sequence's own state of the key: only theirs, so
    // every other window's text is as it was before they existed.
    if (k.watch) {
      j_["watch"] = watched(*k.watch);
    } else {
      j_.erase("watch");
    }
    out += dump(j_);
  }

 private:
  ordered_json j_ = ordered_json::object();
};

// Appends `obj`, whose last member is an empty array, without its closing
// "]}": the caller then appends the elements, one line each, and closes it.
// Building one window at a time keeps a save of a million keys from holding
// a million-node tree. The dump of such an object always ends in "[]}".
void append_opened(std::string& out, const ordered_json& obj) {
  const std::string text = dump(obj);
  out.append(text, 0, text.size() - 2);
}

// ---------------------------------------------------------------- reading

// What a value is, for "expected X, got Y".
std::string got(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::number_integer: return j.get<int64_t>() < 0 ? "a negative number" : "a number";
    case json::value_t::number_unsigned: return "a number";
    case json::value_t::number_float: return "a non-integer number";
    default: return "something else";
  }
}

// Walks the parsed tree; the first problem is kept with the member path
// where it was found ("rules[0].windows[2].now_ms").
class Reader {
 public:
  std::optional<Error> error;

  bool fail(const std::string& path, const std::string& problem) {
    if (!error) error = Error{"", 0, 0, path.empty() ? problem : path + ": " + problem};
    return false;
  }

  static std::string at(const std::string& path, std::string_view name) {
    return path.empty() ? std::string(name) : path + "." + std::string(name);
  }
  static std::string index(const std::string& path, std::size_t i) { return fmt::format("{}[{}]", path, i); }

  // obj is an object.
  const json* member(const json& obj, std::string_view name, const std::string& path) {
    auto it = obj.find(name);
    if (it == obj.end()) {
      fail(at(path, name), "missing");
      return nullptr;
    }
    return &*it;
  }

  bool int64(const json& j, const std::string& path, int64_t& out) {
    if (j.is_number_unsigned()) {
      if (j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return fail(path, "integer out of range");
      out = static_cast<int64_t>(j.get<uint64_t>());
      return true;
    }
    if (j.is_number_integer()) {
      out = j.get<int64_t>();
      return true;
    }
    return fail(path, "expected an integer, got " + got(j));
  }

  bool uint64(const json& j, const std::string& path, uint64_t& out) {
    if (j.is_number_unsigned()) {
      out = j.get<uint64_t>();
      return true;
    }
    return fail(path, "expected a non-negative integer, got " + got(j));
  }

  bool boolean(const json& j, const std::string& path, bool& out) {
    if (!j.is_boolean()) return fail(path, "expected true or false, got " + got(j));
    out = j.get<bool>();
    return true;
  }

  bool bytes(const json& j, const std::string& path, std::string& out) {
    if (j.is_string()) {
      out = j.get_ref<const std::string&>();
      return true;
    }
    if (j.is_object()) {
      auto it = j.find("base64");
      if (it != j.end() && it->is_string()) {
        if (!decode_base64(it->get_ref<const std::string&>(), out)) return fail(at(path, "base64"), "invalid base64");
        return true;
      }
    }
    return fail(path, "expected a string or {\"base64\": \"...\"}, got " + got(j));
  }

  bool array(const json& j, const std::string& path) {
    return j.is_array() || fail(path, "expected an array, got " + got(j));
  }
  bool object(const json& j, const std::string& path) {
    return j.is_object() || fail(path, "expected an object, got " + got(j));
  }

  // Shorthands for a member of an object.
  template <typename T, typename F>
  bool field(const json& obj, std::string_view name, const std::string& path, T& out, F read) {
    const json* m = member(obj, name, path);
    return m != nullptr && (this->*read)(*m, at(path, name), out);
  }

  // 16 hex digits (hash_text()).
  bool hash(const json& j, const std::string& path, uint64_t& out) {
    if (!j.is_string()) return fail(path, "expected a hash of 16 hex digits, got " + got(j));
    const std::string& t = j.get_ref<const std::string&>();
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out, 16);
    if (t.size() != 16 || ec != std::errc() || end != t.data() + t.size())
      return fail(path, "expected a hash of 16 hex digits, got \"" + t.substr(0, 32) + "\"");
    return true;
  }

  // [hash, number] pairs: a distinct value and its bucket, a remembered value and its time.
  template <typename T, typename Make>
  bool hash_pairs(const json& j, const std::string& path, std::vector<T>& out, Make make) {
    if (!array(j, path)) return false;
    out.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
      const json& x = j[i];
      const std::string xp = index(path, i);
      if (!x.is_array() || x.size() != 2) return fail(xp, "expected [hash, number], got " + got(x));
      uint64_t h = 0;
      int64_t n = 0;
      if (!hash(x[0], index(xp, 0), h) || !int64(x[1], index(xp, 1), n)) return false;
      out.push_back(make(h, n));
    }
    return true;
  }

  bool distinct(const json& j, const std::string& path, window::DistinctState& d) {
    if (!object(j, path)) return false;
    const json* exact = member(j, "exact", path);
    if (exact == nullptr || !hash_pairs(*exact, at(path, "exact"), d.exact, [](uint64_t h, int64_t b) {
          return window::DistinctState::Seen{h, b};
        }))
      return false;
    auto o = j.find("overflow_bucket");  // estimating only
    if (o == j.end()) return true;
    if (!int64(*o, at(path, "overflow_bucket"), d.overflow_bucket)) return false;
    const json* ks = member(j, "sketches", path);
    const std::string kp = at(path, "sketches");
    if (ks == nullptr || !array(*ks, kp)) return false;
    for (std::size_t i = 0; i < ks->size(); ++i) {
      const json& k = (*ks)[i];
      const std::string p = index(kp, i);
      window::DistinctState::Sketch sk;
      std::string bytes;
      if (!k.is_array() || k.size() != 2 || !k[1].is_string()) return fail(p, "expected [bucket, \"base64\"]");
      if (!int64(k[0], index(p, 0), sk.bucket)) return false;
      if (!decode_base64(k[1].get_ref<const std::string&>(), bytes)) return fail(index(p, 1), "invalid base64");
      sk.registers.assign(bytes.begin(), bytes.end());
      d.sketches.push_back(std::move(sk));
    }
    return true;
  }

  bool seen(const json& j, const std::string& path, engine::SeenValues& v) {
    if (!object(j, path) || !field(j, "learn_until_ms", path, v.learn_until_ms, &Reader::int64)) return false;
    const json* values = member(j, "values", path);
    return values != nullptr && hash_pairs(*values, at(path, "values"), v.values, [](uint64_t h, int64_t t) {
             return engine::SeenValues::Value{h, t};
           });
  }

  bool window(const json& j, const std::string& path, RuleWindows::Keyed& k) {
    if (!object(j, path)) return false;
    WindowState& w = k.window;
    if (!field(j, "key", path, k.key, &Reader::bytes)) return false;
    if (!field(j, "now_ms", path, w.now_ms, &Reader::int64)) return false;
    const json* bs = member(j, "buckets", path);
    if (bs == nullptr || !array(*bs, at(path, "buckets"))) return false;
    w.buckets.reserve(bs->size());
    for (std::size_t i = 0; i < bs->size(); ++i) {
      const json& b = (*bs)[i];
      const std::string bp = index(at(path, "buckets"), i);
      if (!b.is_array() || b.size() != 2 || !b[1].is_array())
        return fail(bp, "expected [bucket, [counts...]], got " + got(b));
      WindowState::Bucket bucket;
      if (!int64(b[0], index(bp, 0), bucket.bucket)) return false;
      bucket.counts.resize(b[1].size());
      for (std::size_t e = 0; e < b[1].size(); ++e)
        if (!uint64(b[1][e], index(index(bp, 1), e), bucket.counts[e])) return false;
      w.buckets.push_back(std::move(bucket));
    }
    const json* p = member(j, "pending", path);
    const std::string pp = at(path, "pending");
    if (p == nullptr || !object(*p, pp)) return false;
    if (auto c = p->find("counts"); c != p->end()) {  // optional: absent in files of older versions
      const std::string cp = at(pp, "counts");
      if (!array(*c, cp)) return false;
      w.pending_counts.resize(c->size());
      for (std::size_t e = 0; e < c->size(); ++e)
        if (!uint64((*c)[e], index(cp, e), w.pending_counts[e])) return false;
    }
    if (auto d = j.find("distinct"); d != j.end() && !distinct(*d, at(path, "distinct"), w.distinct)) return false;
    if (auto x = j.find("watch"); x != j.end() && !watched(*x, at(path, "watch"), k.watch.emplace())) return false;
    return field(*p, "suppressed", pp, w.pending.suppressed, &Reader::uint64) &&
           field(*p, "first_ms", pp, w.pending.first_ms, &Reader::int64) &&
           field(*p, "last_ms", pp, w.pending.last_ms, &Reader::int64) &&
           field(j, "firing", path, w.firing, &Reader::boolean) &&
           field(j, "announced", path, w.announced, &Reader::boolean) &&
           field(j, "alerted", path, w.alerted, &Reader::boolean) &&
           field(j, "last_alert_ms", path, w.last_alert_ms, &Reader::int64) &&
           field(j, "alert_suppressed", path, w.alert_suppressed, &Reader::uint64);
  }

  // "watch" of a window (optional: only watched rules and sequences write it).
  bool watched(const json& j, const std::string& path, engine::WatchedKey& w) {
    if (!object(j, path)) return false;
    if (auto c = j.find("then_counts"); c != j.end()) {
      const std::string cp = at(path, "then_counts");
      if (!array(*c, cp)) return false;
      if (c->size() > 64) return fail(cp, "more than 64 counts");
      w.then_counts.resize(c->size());
      for (std::size_t e = 0; e < c->size(); ++e)
        if (!uint64((*c)[e], index(cp, e), w.then_counts[e])) return false;
    }
    return field(j, "since_ms", path, w.since_ms, &Reader::int64) &&
           field(j, "last_event_ms", path, w.last_event_ms, &Reader::int64) &&
           field(j, "pending_since_ms", path, w.pending_since_ms, &Reader::int64) &&
           field(j, "armed_at_ms", path, w.armed_at_ms, &Reader::int64) &&
           field(j, "firing", path, w.firing, &Reader::boolean) &&
           field(j, "announced", path, w.announced, &Reader::boolean) &&
           field(j, "alerted", path, w.alerted, &Reader::boolean) &&
           field(j, "last_alert_ms", path, w.last_alert_ms, &Reader::int64) &&
           field(j, "held_back", path, w.held_back, &Reader::uint64);
  }

  // Duplicates would make the engine load one window twice (counts added
  // twice) or pick one rule arbitrarily: a file with them is not ours.
  bool rule(const json& j, const std::string& path, RuleWindows& r) {
    if (!object(j, path)) return false;
    if (!field(j, "rule", path, r.rule, &Reader::bytes)) return false;
    if (!field(j, "fingerprint", path, r.fingerprint, &Reader::bytes)) return false;
    if (auto v = j.find("seen"); v != j.end() && !seen(*v, at(path, "seen"), r.seen.emplace())) return false;
    const json* ws = member(j, "windows", path);
    if (ws == nullptr || !array(*ws, at(path, "windows"))) return false;
    r.windows.resize(ws->size());
    std::unordered_set<std::string_view> keys;
    for (std::size_t i = 0; i < ws->size(); ++i) {
      const std::string wp = index(at(path, "windows"), i);
      if (!window((*ws)[i], wp, r.windows[i])) return false;
      if (!keys.insert(r.windows[i].key).second) {
        std::string q;
        append_json_string(q, r.windows[i].key);
        return fail(at(wp, "key"), "duplicate key " + q);
      }
    }
    return true;
  }
};

// 1-based line and column of the byte nlohmann stopped at (its `byte` counts
// the characters read, so the last one read is at byte - 1).
std::pair<int, int> line_col(std::string_view text, std::size_t byte) {
  std::size_t pos = byte == 0 ? 0 : std::min(byte - 1, text.size());
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < pos; ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return {line, static_cast<int>(pos - line_start + 1)};
}

}  // namespace

std::string to_json(const EngineState& s, int64_t saved_at_ms) {
  std::string saved_at;
  append_rfc3339_ms(saved_at, saved_at_ms);
  ordered_json head = ordered_json::object();
  head["swthrottle_state"] = kVersion;
  head["saved_at"] = std::move(saved_at);
  head["now_ms"] = s.now_ms;
  head["last_log_ms"] = s.last_log_ms;
  head["rules"] = ordered_json::array();

  std::string out;
  WindowWriter window;
  append_opened(out, head);
  for (std::size_t r = 0; r < s.rules.size(); ++r) {
    const RuleWindows& rw = s.rules[r];
    out += r == 0 ? "\n" : ",\n";
    ordered_json rule = ordered_json::object();
    rule["rule"] = json_bytes(rw.rule);
    rule["fingerprint"] = json_bytes(rw.fingerprint);
    if (rw.seen) rule["seen"] = seen_json(*rw.seen);  // before "windows", which append_opened leaves open
    rule["windows"] = ordered_json::array();
    append_opened(out, rule);
    for (std::size_t w = 0; w < rw.windows.size(); ++w) {
      out += w == 0 ? "\n" : ",\n";
      window.append(out, rw.windows[w]);
    }
    out += "]}";
  }
  out += "]";
  if (!s.fleet_unsent.empty()) {
    ordered_json all = ordered_json::array();
    for (const engine::FleetUnsent& u : s.fleet_unsent) {
      ordered_json j = ordered_json::object();
      j["rule"] = json_bytes(u.rule);
      j["hash_key"] = json_bytes(u.hash_key);
      j["key"] = json_bytes(u.key);
      j["host"] = json_bytes(u.host);
      j["seq"] = u.seq;
      j["now_bucket"] = u.now_bucket;
      j["newest_t_ms"] = u.newest_t_ms;
      ordered_json counts = ordered_json::array();
      for (const auto& c : u.counts) counts.push_back(ordered_json::array({c.bucket, c.event, c.n}));
      j["counts"] = std::move(counts);
      all.push_back(std::move(j));
    }
    out += ",\n\"fleet_unsent\":" + dump(all);
  }
  out += "}\n";
  return out;
}

Result<EngineState> from_json(std::string_view text) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    auto [line, col] = line_col(text, e.byte);
    bool at_end = e.byte > text.size();
    return Error{"", line, col, at_end ? "not valid JSON: unexpected end of file" : "not valid JSON"};
  } catch (const json::exception&) {
    return Error{"", 0, 0, "not valid JSON"};
  }
  if (!doc.is_object()) return Error{"", 0, 0, "not a swthrottle state file: expected a JSON object, got " + got(doc)};
  auto v = doc.find("swthrottle_state");
  if (v == doc.end()) return Error{"", 0, 0, "not a swthrottle state file: no \"swthrottle_state\" member"};
  Reader rd;
  int64_t version = 0;
  if (!rd.int64(*v, "swthrottle_state", version)) return *rd.error;
  if (version > kVersion)
    return Error{
        "", 0, 0,
        fmt::format("state file version {} is newer than this swthrottle supports (version {})", version, kVersion)};
  if (version < 1)
    return Error{
        "", 0, 0,
        fmt::format("state file version {} is not supported (this swthrottle reads version {})", version, kVersion)};

  EngineState st;
  if (!rd.field(doc, "now_ms", "", st.now_ms, &Reader::int64) ||
      !rd.field(doc, "last_log_ms", "", st.last_log_ms, &Reader::int64))
    return *rd.error;
  const json* rules = rd.member(doc, "rules", "");
  if (rules == nullptr || !rd.array(*rules, "rules")) return *rd.error;
  st.rules.resize(rules->size());
  std::unordered_set<std::string_view> names;
  for (std::size_t i = 0; i < rules->size(); ++i) {
    const std::string rp = Reader::index("rules", i);
    if (!rd.rule((*rules)[i], rp, st.rules[i])) return *rd.error;
    if (!names.insert(st.rules[i].rule).second) {
      std::string q;
      append_json_string(q, st.rules[i].rule);
      return Error{"", 0, 0, rp + ".rule: duplicate rule " + q};
    }
  }
  if (auto f = doc.find("fleet_unsent"); f != doc.end()) {
    if (!rd.array(*f, "fleet_unsent")) return *rd.error;
    for (std::size_t i = 0; i < f->size(); ++i) {
      const std::string fp = Reader::index("fleet_unsent", i);
      const json& j = (*f)[i];
      engine::FleetUnsent u;
      if (!rd.object(j, fp) || !rd.field(j, "rule", fp, u.rule, &Reader::bytes) ||
          !rd.field(j, "hash_key", fp, u.hash_key, &Reader::bytes) || !rd.field(j, "key", fp, u.key, &Reader::bytes) ||
          !rd.field(j, "host", fp, u.host, &Reader::bytes) || !rd.field(j, "seq", fp, u.seq, &Reader::uint64) ||
          !rd.field(j, "now_bucket", fp, u.now_bucket, &Reader::int64) ||
          !rd.field(j, "newest_t_ms", fp, u.newest_t_ms, &Reader::int64))
        return *rd.error;
      const json* counts = rd.member(j, "counts", fp);
      if (counts == nullptr || !rd.array(*counts, Reader::at(fp, "counts"))) return *rd.error;
      for (std::size_t c = 0; c < counts->size(); ++c) {
        const json& t = (*counts)[c];
        const std::string cp = Reader::index(Reader::at(fp, "counts"), c);
        uint64_t event = 0;
        engine::FleetUnsent::Count n;
        if (!rd.array(t, cp)) return *rd.error;
        if (t.size() != 3) return Error{"", 0, 0, cp + ": expected [bucket, event, count]"};
        if (!rd.int64(t[0], cp, n.bucket) || !rd.uint64(t[1], cp, event) || !rd.uint64(t[2], cp, n.n)) return *rd.error;
        if (event >= 64) return Error{"", 0, 0, cp + ": event " + std::to_string(event) + " out of range"};
        n.event = static_cast<uint32_t>(event);
        u.counts.push_back(n);
      }
      st.fleet_unsent.push_back(std::move(u));
    }
  }
  // Well-formed, but with values no run writes (a time in the year
  // 292278994, a count of 2^63): not ours, or damaged.
  if (auto e = out_of_range(st)) return std::move(*e);
  return st;
}

}  // namespace swthrottle::state
