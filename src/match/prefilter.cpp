#include "match/prefilter.h"

#include <hs/hs.h>
#include <re2/filtered_re2.h>
#include <re2/re2.h>

#include <algorithm>
#include <climits>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <mutex>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

namespace swthrottle::match {

namespace {

// Shorter literals are dropped from the formulas (RE2's own default): a
// one- or two-byte atom occurs on nearly every line, and each occurrence costs
// a callback. A pattern left with no atom of this length turns the prefilter off.
constexpr int kMinAtomLen = 3;

bool has_high_byte(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
#if defined(__SSE2__)
  // 64 bytes per step, one test per step: a whole batch is checked at
  // memory speed, and the usual batch is all ASCII.
  for (; i + 64 <= n; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 48));
    if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d))) != 0) return true;
  }
#endif
  uint64_t acc = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    acc |= w;
  }
  for (; i < n; ++i) acc |= p[i];
  return (acc & 0x8080808080808080ULL) != 0;
}

// An atom of a field's text that the raw JSON line holds as it is, or with
// '"' and '\' escaped (the second spelling is scanned too), as long as the
// line has no "\u" escape (such a line is a candidate for every event):
// printable ASCII but '/', which JSON may also write "\/".
bool json_safe(std::string_view atom) {
  return std::all_of(atom.begin(), atom.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7F && c != '/';
  });
}

// The atoms of `pattern` (min kMinAtomLen), or nullopt when a match need hold
// none (no formula) or RE2 cannot compile it.
std::optional<std::vector<std::string>> atoms_of(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  re2::FilteredRE2 f(kMinAtomLen);
  int id = 0;
  if (f.Add(pattern, options, &id) != RE2::NoError) return std::nullopt;
  std::vector<std::string> atoms;
  f.Compile(&atoms);
  std::vector<int> potentials;
  f.AllPotentials({}, &potentials);
  if (!potentials.empty()) return std::nullopt;
  return atoms;
}

// What the raw line must hold for field condition `c` to be true, as a
// pattern for FilteredRE2 (never run, only read for its literals), or "":
// - a regex: the regex itself, when all its atoms are json_safe;
// - an equality: the value, quoted, when it is json_safe;
// - else, each key of its path as a JSON string ("msg" -> "\"msg\""), when
//   its spelling is plain (an escaped key holds "\u" or "\/": such a line is
//   a candidate, or the key is not used).
std::string field_piece(const config::FieldCondition& c) {
  if (c.regex) {
    if (auto atoms = atoms_of(c.value);
        atoms && std::all_of(atoms->begin(), atoms->end(), [](const std::string& a) { return json_safe(a); })) {
      return c.value;
    }
  } else if (c.value.size() >= static_cast<std::size_t>(kMinAtomLen) && json_safe(c.value)) {
    return RE2::QuoteMeta(c.value);
  }
  std::string piece;
  std::size_t from = 0;
  for (;;) {
    const std::size_t dot = c.path.find('.', from);
    const std::string key = c.path.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    if (!key.empty() && json_safe(key) && key.find_first_of("\"\\") == std::string::npos) {
      if (!piece.empty()) piece += "(?s:.*)";
      piece += RE2::QuoteMeta("\"" + key + "\"");
    }
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  return piece;
}

// The pattern the prefilter reads for an event: its `match` (on the raw
// line), then what each field needs (field_piece), joined as a sequence, so
// that every atom of each part is needed (the order is no matter: the
// formula has none). "" when there is nothing.
std::string prefilter_pattern(const config::Event& e, bool& from_fields) {
  std::vector<std::string> parts;
  if (!e.match.empty()) parts.push_back(e.match);
  for (const config::FieldCondition& c : e.fields) {
    // An envelope's field (stream, k8s.*) is not in the text of its lines.
    if (config::is_envelope_path(c.path)) continue;
    std::string piece = field_piece(c);
    if (piece.empty()) continue;
    from_fields = true;
    parts.push_back(std::move(piece));
  }
  if (parts.size() == 1) return parts[0];
  std::string p;
  for (const std::string& part : parts) p += (p.empty() ? "(?:" : "(?s:.*)(?:") + part + ")";
  return p;
}

// The JSON spelling of an atom of a field's text: '"' and '\' escaped.
std::string json_spelling(std::string_view atom) {
  std::string s;
  for (char c : atom) {
    if (c == '"' || c == '\\') s += '\\';
    s += c;
  }
  return s;
}

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace

// What make() compiles: read-only once made, so every thread's Prefilter
// (another()) scans with the same database and asks the same formulas.
//
// The vectorscan database is compiled when a Prefilter first scans, once for
// all threads (database()): it is most of the prefilter's cost with many
// rules (~150 us a literal; a pack of 88,000 rules has ~190,000), and
// --check, which only lists the literals, never scans.
struct Prefilter::Compiled {
  std::string reason;
  std::vector<std::string> atoms;
  uint32_t escaped_id = UINT32_MAX;  // reported for a line whose fields may be spelled otherwise
  re2::FilteredRE2 filter{kMinAtomLen};
  // What vectorscan is given: each literal's spellings, and the atom each is.
  std::vector<std::string> spellings;
  std::vector<unsigned> ids;

  Compiled() = default;
  Compiled(const Compiled&) = delete;
  Compiled& operator=(const Compiled&) = delete;
  ~Compiled() {
    if (db) hs_free_database(db);
  }

  // The database, compiled by the first caller; null when it cannot be
  // (late_reason says why): then every line is a candidate.
  hs_database_t* database() const {
    std::call_once(once, [this] {
      std::vector<const char*> exprs;
      std::vector<std::size_t> lens;
      std::vector<unsigned> flags;
      for (const std::string& sp : spellings) {
        exprs.push_back(sp.data());
        lens.push_back(sp.size());
        flags.push_back(HS_FLAG_CASELESS);
      }
      hs_compile_error_t* err = nullptr;
      if (hs_compile_lit_multi(exprs.data(), flags.data(), ids.data(), lens.data(), static_cast<unsigned>(exprs.size()),
                               HS_MODE_BLOCK, nullptr, &db, &err) != HS_SUCCESS) {
        late_reason = "vectorscan cannot compile the literals: " +
                      std::string(err && err->message ? err->message : "unknown error");
        hs_free_compile_error(err);
        db = nullptr;
      }
    });
    return db;
  }

  mutable std::once_flag once;
  mutable hs_database_t* db = nullptr;  // set once, under `once`
  mutable std::string late_reason;      // likewise
};

struct Prefilter::Impl {
  std::shared_ptr<const Compiled> compiled;
  const std::vector<std::string>& atoms;
  const re2::FilteredRE2& filter;
  const uint32_t escaped_id;
  hs_database_t* db = nullptr;      // compiled->database(), at the first scan
  hs_scratch_t* scratch = nullptr;  // this thread's, likewise
  bool broken = false;              // the database or the scratch could not be made

  // One scan's state, reused.
  const LineSpan* lines = nullptr;
  std::size_t nlines = 0;
  std::size_t cursor = 0;                            // the line of the last reported atom
  std::vector<std::pair<uint32_t, uint32_t>> found;  // (line, atom), in report order
  std::vector<int> line_atoms;
  std::vector<int> potentials;
  std::string memo_key;
  // Atom combination -> verdict: as a bit set when there are at most 64
  // atoms (the usual case, and a cheaper hash), else as bytes.
  std::unordered_map<uint64_t, int32_t> mask_memo;
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> memo;
  // The lists of potential events, by verdict.
  std::vector<std::vector<uint32_t>> lists;

  explicit Impl(std::shared_ptr<const Compiled> c)
      : compiled(std::move(c)), atoms(compiled->atoms), filter(compiled->filter), escaped_id(compiled->escaped_id) {}

  // The database and this thread's scratch, made at the first scan.
  bool ready() {
    if (scratch != nullptr) return true;
    if (broken || !compiled->reason.empty()) return false;
    db = compiled->database();
    if (db == nullptr || hs_alloc_scratch(db, &scratch) != HS_SUCCESS) {
      scratch = nullptr;
      broken = true;
      return false;
    }
    return true;
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  ~Impl() {
    if (scratch) hs_free_scratch(scratch);
  }

  // The line holding byte `pos` of the text: lines are in text order, and
  // vectorscan reports in (nearly) ascending end offsets, so this walks.
  std::size_t line_of(std::size_t pos) {
    std::size_t c = cursor;
    if (pos < lines[c].first) {
      const LineSpan* it =
          std::upper_bound(lines, lines + c, pos, [](std::size_t p, const LineSpan& l) { return p < l.first; });
      c = static_cast<std::size_t>(it - lines) - 1;  // lines[0].first == 0 <= pos
    } else {
      while (c + 1 < nlines && lines[c + 1].first <= pos) ++c;
    }
    cursor = c;
    return c;
  }

  static int on_match(unsigned int id, unsigned long long /*from*/, unsigned long long to, unsigned int /*flags*/,
                      void* ctx) {
    auto* self = static_cast<Impl*>(ctx);
    // `to` is one past the atom's last byte; atoms are never empty.
    const auto line = static_cast<uint32_t>(self->line_of(static_cast<std::size_t>(to - 1)));
    self->found.emplace_back(line, id);
    return 0;  // go on
  }

  // The verdict for the atoms of one line (sorted, unique).
  int32_t verdict_for(const std::vector<int>& ids) {
    const bool by_mask = atoms.size() <= 64;
    uint64_t mask = 0;
    if (by_mask) {
      for (int id : ids) mask |= uint64_t{1} << id;
      if (auto it = mask_memo.find(mask); it != mask_memo.end()) return it->second;
    } else {
      memo_key.assign(reinterpret_cast<const char*>(ids.data()), ids.size() * sizeof(int));
      if (auto it = memo.find(std::string_view(memo_key)); it != memo.end()) return it->second;
    }
    const std::size_t remembered = by_mask ? mask_memo.size() : memo.size();
    filter.AllPotentials(ids, &potentials);
    int32_t verdict = kNone;
    if (!potentials.empty()) {
      // Past the memo's bound, every new combination gets "any event".
      if (remembered >= kMemoEntries) return kAll;
      std::sort(potentials.begin(), potentials.end());
      verdict = static_cast<int32_t>(lists.size());
      lists.emplace_back(potentials.begin(), potentials.end());
    }
    if (remembered < kMemoEntries) {
      if (by_mask) mask_memo.emplace(mask, verdict);
      else memo.emplace(memo_key, verdict);
    }
    return verdict;
  }
};

Prefilter::Prefilter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Prefilter::Prefilter(Prefilter&&) noexcept = default;
Prefilter& Prefilter::operator=(Prefilter&&) noexcept = default;
Prefilter::~Prefilter() = default;

bool Prefilter::active() const { return impl_->compiled->reason.empty() && !impl_->broken; }
const std::string& Prefilter::reason() const {
  static const std::string kNoScratch = "vectorscan cannot allocate its scratch space";
  if (!impl_->compiled->reason.empty() || !impl_->broken) return impl_->compiled->reason;
  return impl_->compiled->late_reason.empty() ? kNoScratch : impl_->compiled->late_reason;
}
const std::vector<std::string>& Prefilter::atoms() const { return impl_->atoms; }
std::span<const uint32_t> Prefilter::potentials(int32_t verdict) const {
  return impl_->lists[static_cast<std::size_t>(verdict)];
}

Prefilter Prefilter::another() const {
  // Its scratch is its own, allocated at its first scan from the shared
  // database (hs_clone_scratch would read this thread's scratch while it may
  // be scanning). Without one it is inactive: every line a candidate.
  return Prefilter(std::make_unique<Impl>(impl_->compiled));
}

Prefilter Prefilter::make(const config::RuleSet& rules) {
  auto compiled = std::make_shared<Compiled>();
  Compiled& m = *compiled;
  auto off = [&](std::string why) {
    m.reason = std::move(why);
    return Prefilter(std::make_unique<Impl>(std::move(compiled)));
  };

  RE2::Options options;
  options.set_log_errors(false);
  // Only events decide whether a line can match: an `ignore` can only take
  // a match away, and the full matcher applies it to every candidate.
  // An event's `fields` add what the raw line must hold for them
  // (prefilter_pattern); an event with only `fields` and nothing found that
  // way has the empty pattern, which has no literal and so turns the
  // prefilter off.
  std::vector<std::string> patterns;
  bool from_fields = false;
  for (const auto& rule : rules.rules) {
    if (rule.matched_as) continue;  // a backtest's copy: never matched itself (Matcher::make)
    for (const auto& event : rule.events) patterns.push_back(prefilter_pattern(event, from_fields));
  }
  if (patterns.empty()) return off("no event patterns");
  for (const std::string& p : patterns) {
    int id = 0;
    if (m.filter.Add(p, options, &id) != RE2::NoError) return off(fmt::format("RE2 cannot compile '{}'", p));
  }
  m.filter.Compile(&m.atoms);

  const std::vector<int> none;
  std::vector<int> potentials;
  m.filter.AllPotentials(none, &potentials);
  if (!potentials.empty()) {
    const int i = potentials.front();
    return off(fmt::format("pattern '{}' has no literal of {} bytes or more that every match contains",
                           patterns[static_cast<std::size_t>(i)], kMinAtomLen));
  }
  for (const std::string& a : m.atoms) {
    if (has_high_byte(a)) return off(fmt::format("literal '{}' is not ASCII", a));
  }
  if (hs_valid_platform() != HS_SUCCESS) return off("vectorscan does not support this CPU");

  // Each atom as it is and, when it holds '"' or a backslash, as a JSON string
  // spells it (a field's text); with atoms of fields, the markers of a line
  // whose fields may be spelled otherwise (the escaped id).
  std::vector<std::string>& spellings = m.spellings;
  std::vector<unsigned>& ids = m.ids;
  for (std::size_t i = 0; i < m.atoms.size(); ++i) {
    spellings.push_back(m.atoms[i]);
    ids.push_back(static_cast<unsigned>(i));
    if (from_fields && m.atoms[i].find_first_of("\"\\") != std::string::npos) {
      spellings.push_back(json_spelling(m.atoms[i]));
      ids.push_back(static_cast<unsigned>(i));
    }
  }
  m.escaped_id = static_cast<uint32_t>(m.atoms.size());
  if (from_fields) {
    // "\u": any character of a field may be written so. Under --input
    // journal, "[" then a digit or a blank: a field may be an array of bytes.
    spellings.emplace_back("\\u");
    if (rules.settings.journal) {
      for (const char* s : {"[0", "[1", "[2", "[3", "[4", "[5", "[6", "[7", "[8", "[9", "[ ", "[\t", "[\r", "[\n"})
        spellings.emplace_back(s);
    }
    ids.resize(spellings.size(), m.escaped_id);
  }
  return Prefilter(std::make_unique<Impl>(std::move(compiled)));
}

void Prefilter::scan(std::string_view text, std::span<const LineSpan> lines, std::vector<int32_t>& verdict) {
  Impl& m = *impl_;
  const std::size_t n = lines.size();
  if (!active() || text.size() > UINT_MAX || !m.ready()) {
    verdict.assign(n, kAll);
    return;
  }
  verdict.assign(n, kNone);
  if (n == 0) return;

  m.lines = lines.data();
  m.nlines = n;
  m.cursor = 0;
  m.found.clear();
  if (hs_scan(m.db, text.data(), static_cast<unsigned>(text.size()), 0, m.scratch, &Impl::on_match, &m) != HS_SUCCESS) {
    verdict.assign(n, kAll);  // cannot happen with a valid database; never lose a line over it
    return;
  }

  // Group the atoms by line (they come nearly sorted), then ask the formulas.
  auto by_line = [](const auto& a, const auto& b) { return a.first < b.first; };
  if (!std::is_sorted(m.found.begin(), m.found.end(), by_line))
    std::stable_sort(m.found.begin(), m.found.end(), by_line);
  for (std::size_t i = 0; i < m.found.size();) {
    const uint32_t line = m.found[i].first;
    m.line_atoms.clear();
    bool escaped = false;
    for (; i < m.found.size() && m.found[i].first == line; ++i) {
      if (m.found[i].second == m.escaped_id) escaped = true;
      else m.line_atoms.push_back(static_cast<int>(m.found[i].second));
    }
    if (escaped) {
      verdict[line] = kAll;
      continue;
    }
    std::sort(m.line_atoms.begin(), m.line_atoms.end());
    m.line_atoms.erase(std::unique(m.line_atoms.begin(), m.line_atoms.end()), m.line_atoms.end());
    verdict[line] = m.verdict_for(m.line_atoms);
  }

  // Lines with bytes >= 0x80 are beyond what ASCII case folding can promise.
  if (has_high_byte(text)) {
    for (std::size_t i = 0; i < n; ++i) {
      if (has_high_byte(text.substr(lines[i].first, lines[i].second))) verdict[i] = kAll;
    }
  }
}

}  // namespace swthrottle::match
