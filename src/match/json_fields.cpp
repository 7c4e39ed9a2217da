#include "match/json_fields.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>

#include "match/json_repair.h"

namespace swthrottle::match {

namespace od = simdjson::ondemand;

namespace {

// What a slot holds after a read.
enum : uint8_t { kMissing = 0, kScalar = 1, kCompound = 2 };

}  // namespace

struct JsonFields::Impl {
  // The named paths as a tree of keys; node 0 is the line's object.
  struct Node {
    std::string key;
    int slot = -1;                   // a named path ends here
    std::vector<uint32_t> children;  // keys below this one that lead to a named path
  };
  std::vector<Node> nodes{Node{}};
  std::vector<std::string> paths;
  std::vector<std::string_view> value;  // per slot
  std::vector<uint8_t> state;           // per slot
  // byte_arrays: per slot, the bytes of an array of integers 0-255. Cleared,
  // never shrunk: a steady stream of such fields allocates nothing.
  std::vector<std::string> bytes;
  bool byte_arrays = false;
  std::vector<char> padded;  // the line and SIMDJSON_PADDING bytes
  od::parser parser;
  od::document doc;
  // A repaired line (Read::Repaired): the line as it came, the strings that
  // were neutralized in `padded`, and per slot (and for a key) the lenient
  // text of such a string. Cleared, never shrunk.
  std::string_view line;
  std::vector<RepairedString> repaired;
  std::vector<std::string> lenient;
  std::string lenient_key;

  // The lenient text of the string whose opening quote is at `open` in
  // `padded`, into `out`; false when that string was not repaired (its
  // parsed text is right).
  bool lenient_text(std::size_t open, std::string& out) const {
    const auto it = std::lower_bound(repaired.begin(), repaired.end(), open,
                                     [](const RepairedString& r, std::size_t at) { return r.open < at; });
    if (it == repaired.end() || it->open != open) return false;
    decode_lenient(line.substr(open + 1, it->close - open - 1), out);
    return true;
  }

  void add(const std::string& path, int slot) {
    uint32_t at = 0;
    std::size_t from = 0;
    while (true) {
      const std::size_t dot = path.find('.', from);
      const std::string key = path.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
      uint32_t next = UINT32_MAX;
      for (uint32_t c : nodes[at].children) {
        if (nodes[c].key == key) next = c;
      }
      if (next == UINT32_MAX) {
        next = static_cast<uint32_t>(nodes.size());
        nodes.push_back(Node{key, -1, {}});
        nodes[at].children.push_back(next);
      }
      at = next;
      if (dot == std::string::npos) break;
      from = dot + 1;
    }
    nodes[at].slot = slot;
  }

  // Reads the scalar `v` into slot `slot` (when still missing: first key wins).
  simdjson::error_code scalar(od::value& v, od::json_type type, int slot) {
    std::string_view text;
    if (type == od::json_type::string) {
      const std::string_view raw = v.raw_json_token();  // from its opening quote
      if (auto e = v.get_string().get(text)) return e;
      // (Only for the first occurrence: a duplicate key must not overwrite the text kept.)
      std::string& own = lenient[static_cast<std::size_t>(slot)];
      if (!repaired.empty() && state[static_cast<std::size_t>(slot)] == kMissing &&
          lenient_text(static_cast<std::size_t>(raw.data() - padded.data()), own))
        text = own;
    } else {
      text = v.raw_json_token();
      while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n' || text.back() == '\r'))
        text.remove_suffix(1);
      // raw_json_token does not check the token; these do.
      if (type == od::json_type::number) {
        od::number n;
        if (auto e = v.get_number().get(n)) return e;
      } else if (type == od::json_type::boolean) {
        bool b = false;
        if (auto e = v.get_bool().get(b)) return e;
      } else {
        bool null = false;
        if (auto e = v.is_null().get(null)) return e;
        if (!null) return simdjson::INCORRECT_TYPE;
      }
    }
    const auto s = static_cast<std::size_t>(slot);
    if (state[s] == kMissing) {
      state[s] = kScalar;
      value[s] = text;
    }
    return simdjson::SUCCESS;
  }

  // Reads `array` into slot `slot` as bytes when every element is an integer
  // 0-255 written in plain digits ([104,105] is "hi"); else the slot holds a
  // compound value, as any other array. Every element is visited either way.
  simdjson::error_code byte_array(od::array array, int slot) {
    const auto s = static_cast<std::size_t>(slot);
    std::string& out = bytes[s];
    out.clear();
    bool ok = true;
    for (auto item : array) {
      od::value el;
      if (auto e = std::move(item).get(el)) return e;
      od::json_type type;
      if (auto e = el.type().get(type)) return e;
      if (!ok || type != od::json_type::number) {
        ok = false;
        continue;  // skipped unread
      }
      std::string_view token = el.raw_json_token();
      while (!token.empty() &&
             (token.back() == ' ' || token.back() == '\t' || token.back() == '\n' || token.back() == '\r'))
        token.remove_suffix(1);
      unsigned b = 0;
      ok = !token.empty() && token.size() <= 3 && (token.size() == 1 || token[0] != '0');
      for (char c : token) {
        if (c < '0' || c > '9') ok = false;
        b = b * 10 + static_cast<unsigned>(c - '0');
      }
      if (ok && b > 255) ok = false;
      if (ok) out.push_back(static_cast<char>(b));
    }
    if (ok) {
      state[s] = kScalar;
      value[s] = out;
    } else {
      state[s] = kCompound;
    }
    return simdjson::SUCCESS;
  }

  // Parses padded[0, size) and reads the named paths; false when it is not
  // one JSON object.
  bool parse(std::size_t size);

  simdjson::error_code walk(od::object object, uint32_t node) {
    for (auto item : object) {
      od::field field;
      if (auto e = std::move(item).get(field)) return e;
      // raw() is just past the key's opening quote. Read before
      // unescaped_key(), which consumes the key (simdjson then holds no
      // pointer to it: key() after it is undefined).
      const char* const raw_key = field.key().raw();
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return e;
      if (!repaired.empty() && lenient_text(static_cast<std::size_t>(raw_key - padded.data()) - 1, lenient_key))
        key = lenient_key;
      uint32_t child = UINT32_MAX;
      for (uint32_t c : nodes[node].children) {
        if (nodes[c].key == key) {
          child = c;
          break;
        }
      }
      if (child == UINT32_MAX) continue;  // on-demand skips the value unread
      od::value v = field.value();
      od::json_type type;
      if (auto e = v.type().get(type)) return e;
      const Node& n = nodes[child];
      if (type == od::json_type::array && byte_arrays && n.slot >= 0 &&
          state[static_cast<std::size_t>(n.slot)] == kMissing) {
        od::array array;
        if (auto e = v.get_array().get(array)) return e;
        if (auto e = byte_array(array, n.slot)) return e;
        continue;
      }
      if (type == od::json_type::object || type == od::json_type::array) {
        if (n.slot >= 0 && state[static_cast<std::size_t>(n.slot)] == kMissing) {
          state[static_cast<std::size_t>(n.slot)] = kCompound;
        }
        if (type == od::json_type::object && !n.children.empty()) {
          od::object sub;
          if (auto e = v.get_object().get(sub)) return e;
          if (auto e = walk(sub, child)) return e;
        }
        continue;
      }
      if (n.slot >= 0) {
        if (auto e = scalar(v, type, n.slot)) return e;
      }
    }
    return simdjson::SUCCESS;
  }
};

JsonFields::JsonFields(std::span<const std::string> paths) : impl_(std::make_unique<Impl>()) {
  for (std::size_t i = 0; i < paths.size(); ++i) {
    impl_->paths.push_back(paths[i]);
    impl_->add(paths[i], static_cast<int>(i));
  }
  impl_->value.resize(paths.size());
  impl_->state.resize(paths.size(), kMissing);
  impl_->bytes.resize(paths.size());
  impl_->lenient.resize(paths.size());
}

void JsonFields::set_byte_arrays(bool on) { impl_->byte_arrays = on; }
JsonFields::JsonFields(JsonFields&&) noexcept = default;
JsonFields& JsonFields::operator=(JsonFields&&) noexcept = default;
JsonFields::~JsonFields() = default;

bool JsonFields::looks_like_json(std::string_view line) {
  const std::size_t at = line.find_first_not_of(" \t\r");
  return at != std::string_view::npos && line[at] == '{';
}

JsonFields::Read JsonFields::read(std::string_view line) {
  Impl& m = *impl_;
  std::fill(m.state.begin(), m.state.end(), kMissing);
  if (!looks_like_json(line)) return Read::Text;
  const std::size_t need = line.size() + simdjson::SIMDJSON_PADDING;
  if (m.padded.size() < need) m.padded.resize(std::max(need, 2 * m.padded.size()));
  std::memcpy(m.padded.data(), line.data(), line.size());
  std::memset(m.padded.data() + line.size(), 0, simdjson::SIMDJSON_PADDING);

  m.repaired.clear();
  if (m.parse(line.size())) return Read::Json;
  // Not JSON as written: perhaps only inside its strings (json_repair.h).
  std::fill(m.state.begin(), m.state.end(), kMissing);
  if (!neutralize_strings(m.padded.data(), line.size(), m.repaired)) return Read::Invalid;
  m.line = line;
  const bool repaired = m.parse(line.size());
  m.repaired.clear();
  if (repaired) return Read::Repaired;
  std::fill(m.state.begin(), m.state.end(), kMissing);
  return Read::Invalid;
}

bool JsonFields::Impl::parse(std::size_t size) {
  if (parser.iterate(padded.data(), size, padded.size()).get(doc)) return false;
  od::object object;
  if (doc.get_object().get(object)) return false;
  if (walk(object, 0)) return false;
  // In bounds after the object: text follows it ({"a":1} x).
  const char* rest = nullptr;
  return doc.current_location().get(rest) != simdjson::SUCCESS;
}

std::optional<std::string_view> JsonFields::text(std::size_t slot) const {
  if (impl_->state[slot] != kScalar) return std::nullopt;
  return impl_->value[slot];
}

int JsonFields::slot_of(std::string_view path) const {
  const auto& p = impl_->paths;
  const auto it = std::find(p.begin(), p.end(), path);
  return it == p.end() ? -1 : static_cast<int>(it - p.begin());
}

}  // namespace swthrottle::match
