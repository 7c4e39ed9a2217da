// --state: JSON text <-> EngineState, and the crash-safe file around it.
// See state_file.h for the format and the guarantees.
#include "state/state_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iterator>
#include <limits>
#include <optional>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/clock.h"
#include "util/json.h"

namespace swthrottle::state {
namespace {

using nlohmann::json;
using engine::EngineState;
using engine::RuleWindows;
using window::WindowState;

// ---------------------------------------------------------------- bytes <-> JSON

// Strict UTF-8 (RFC 3629): no overlongs, no surrogates, nothing above
// U+10FFFF. This is exactly what nlohmann's parser accepts inside a string,
// so whatever we write as a plain string reads back as the same bytes.
bool valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  auto cont = [&](const unsigned char* q, unsigned char lo, unsigned char hi) {
    return q < end && *q >= lo && *q <= hi;
  };
  while (p < end) {
    unsigned char c = *p;
    if (c < 0x80) {
      ++p;
    } else if (c >= 0xC2 && c <= 0xDF) {
      if (!cont(p + 1, 0x80, 0xBF)) return false;
      p += 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      unsigned char lo = c == 0xE0 ? 0xA0 : 0x80;  // E0: no overlongs
      unsigned char hi = c == 0xED ? 0x9F : 0xBF;  // ED: no surrogates
      if (!cont(p + 1, lo, hi) || !cont(p + 2, 0x80, 0xBF)) return false;
      p += 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
      unsigned char lo = c == 0xF0 ? 0x90 : 0x80;  // F0: no overlongs
      unsigned char hi = c == 0xF4 ? 0x8F : 0xBF;  // F4: nothing above U+10FFFF
      if (!cont(p + 1, lo, hi) || !cont(p + 2, 0x80, 0xBF) || !cont(p + 3, 0x80, 0xBF)) return false;
      p += 4;
    } else {
      return false;
    }
  }
  return true;
}

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void append_base64(std::string& out, std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t n = s.size(), i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8) | p[i + 2];
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += kB64[v & 63];
  }
  if (n - i == 1) {
    uint32_t v = uint32_t{p[i]} << 16;
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += "==";
  } else if (n - i == 2) {
    uint32_t v = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8);
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += '=';
  }
}

// Strict: padded, no whitespace, and the bits below the last character must
// be zero, so that every byte string has exactly one encoding.
bool decode_base64(std::string_view s, std::string& out) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (s.size() % 4 != 0) return false;
  out.clear();
  for (std::size_t i = 0; i < s.size(); i += 4) {
    const bool last = i + 4 == s.size();
    int pad = 0;
    if (last && s[i + 3] == '=') pad = s[i + 2] == '=' ? 2 : 1;
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      int d = k >= 4 - pad ? 0 : val(s[i + k]);
      if (d < 0) return false;
      v = (v << 6) | static_cast<uint32_t>(d);
    }
    out += static_cast<char>(v >> 16);
    if (pad == 2) {
      if ((v & 0xFFFF) != 0) return false;
    } else {
      out += static_cast<char>((v >> 8) & 0xFF);
      if (pad == 1) {
        if ((v & 0xFF) != 0) return false;
      } else {
        out += static_cast<char>(v & 0xFF);
      }
    }
  }
  return true;
}

void append_bytes(std::string& out, std::string_view s) {
  if (valid_utf8(s)) {
    append_json_string(out, s);  // valid input: escaped only, never repaired
    return;
  }
  out += "{\"base64\":\"";
  append_base64(out, s);
  out += "\"}";
}

// ---------------------------------------------------------------- writing

void append_window(std::string& out, const RuleWindows::Keyed& k) {
  const WindowState& w = k.window;
  auto it = std::back_inserter(out);
  out += "{\"key\":";
  append_bytes(out, k.key);
  fmt::format_to(it, ",\"now_ms\":{},\"buckets\":[", w.now_ms);
  for (std::size_t b = 0; b < w.buckets.size(); ++b) {
    if (b != 0) out += ',';
    fmt::format_to(it, "[{},[{}]]", w.buckets[b].bucket, fmt::join(w.buckets[b].counts, ","));
  }
  fmt::format_to(it,
                 "],\"pending\":{{\"suppressed\":{},\"first_ms\":{},\"last_ms\":{}}},\"firing\":{},"
                 "\"announced\":{},\"alerted\":{},\"last_alert_ms\":{},\"alert_suppressed\":{}}}",
                 w.pending.suppressed, w.pending.first_ms, w.pending.last_ms, w.firing, w.announced,
                 w.alerted, w.last_alert_ms, w.alert_suppressed);
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
    return field(*p, "suppressed", pp, w.pending.suppressed, &Reader::uint64) &&
           field(*p, "first_ms", pp, w.pending.first_ms, &Reader::int64) &&
           field(*p, "last_ms", pp, w.pending.last_ms, &Reader::int64) &&
           field(j, "firing", path, w.firing, &Reader::boolean) &&
           field(j, "announced", path, w.announced, &Reader::boolean) &&
           field(j, "alerted", path, w.alerted, &Reader::boolean) &&
           field(j, "last_alert_ms", path, w.last_alert_ms, &Reader::int64) &&
           field(j, "alert_suppressed", path, w.alert_suppressed, &Reader::uint64);
  }

  // Duplicates would make the engine load one window twice (counts added
  // twice) or pick one rule arbitrarily: a file with them is not ours.
  bool rule(const json& j, const std::string& path, RuleWindows& r) {
    if (!object(j, path)) return false;
    if (!field(j, "rule", path, r.rule, &Reader::bytes)) return false;
    if (!field(j, "fingerprint", path, r.fingerprint, &Reader::bytes)) return false;
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

// ---------------------------------------------------------------- files

std::string strerr(int e) { return std::strerror(e); }

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// PATH.lock, for reading and writing when we may, else read-only (flock
// works on either; the lock file of another user may be 0644).
int open_lock_file(const std::string& lock_path) {
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 && (errno == EACCES || errno == EROFS)) {
    int saved = errno;
    fd = ::open(lock_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) errno = saved;
  }
  return fd;
}

int flock_blocking(int fd) {
  while (::flock(fd, LOCK_EX) != 0)
    if (errno != EINTR) return -1;
  return 0;
}

// Writes, fsyncs and closes `tmp`. Returns 0 or an errno; on failure a file
// we created is removed again. O_EXCL|O_NOFOLLOW: a symlink planted at the
// temporary name (in a shared directory) is removed, never written through.
int write_temporary(const std::string& tmp, std::string_view text, mode_t mode) {
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(tmp.c_str(), flags, 0600);
  if (fd < 0 && errno == EEXIST) {
    // Under the lock nobody else writes it: it is left over from a killed saver.
    if (::unlink(tmp.c_str()) != 0) return errno;
    fd = ::open(tmp.c_str(), flags, 0600);
  }
  if (fd < 0) return errno;
  auto fail = [&](int e) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return e;
  };
  if (mode != 0600) (void)::fchmod(fd, mode);  // best effort: the content matters more
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) return fail(errno);
  if (::close(fd) != 0 && errno != EINTR) {
    int e = errno;
    ::unlink(tmp.c_str());
    return e;
  }
  return 0;
}

std::string corrupt_name(const std::string& path, int64_t now_wall_ms) {
  std::time_t secs = static_cast<std::time_t>(now_wall_ms >= 0 ? now_wall_ms / 1000 : (now_wall_ms - 999) / 1000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[32];
  std::size_t n = std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return path + ".corrupt-" + std::string(buf, n);
}

// rename without replacing an existing file. Returns 0 or an errno.
int rename_noreplace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return errno;
  // A file system without RENAME_NOREPLACE: check, then rename. We hold the
  // lock, so only a stranger could create the name in between.
  struct stat st;
  if (::lstat(to.c_str(), &st) == 0) return EEXIST;
  return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
}

}  // namespace

// ---------------------------------------------------------------- to_json / from_json

std::string to_json(const EngineState& s, int64_t saved_at_ms) {
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "{{\"swthrottle_state\":{},\"saved_at\":\"", kVersion);
  append_rfc3339_ms(out, saved_at_ms);
  fmt::format_to(it, "\",\"now_ms\":{},\"last_log_ms\":{},\"rules\":[", s.now_ms, s.last_log_ms);
  for (std::size_t r = 0; r < s.rules.size(); ++r) {
    const RuleWindows& rw = s.rules[r];
    out += r == 0 ? "\n{\"rule\":" : ",\n{\"rule\":";
    append_bytes(out, rw.rule);
    out += ",\"fingerprint\":";
    append_bytes(out, rw.fingerprint);
    out += ",\"windows\":[";
    for (std::size_t w = 0; w < rw.windows.size(); ++w) {
      out += w == 0 ? "\n" : ",\n";
      append_window(out, rw.windows[w]);
    }
    out += "]}";
  }
  out += "]}\n";
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
    return Error{"", 0, 0,
                 fmt::format("state file version {} is newer than this swthrottle supports (version {})", version,
                             kVersion)};
  if (version < 1)
    return Error{"", 0, 0,
                 fmt::format("state file version {} is not supported (this swthrottle reads version {})", version,
                             kVersion)};

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
  return st;
}

// ---------------------------------------------------------------- StateFile

StateFile::StateFile(std::string path) : path_(std::move(path)) {}

StateFile::~StateFile() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

Result<bool> StateFile::lock_for_run(const std::function<void(const std::string&)>& on_wait) {
  std::lock_guard guard(mu_);
  if (lock_fd_ >= 0) return true;
  const std::string lp = lock_path();
  int fd = open_lock_file(lp);
  if (fd < 0)
    return Error{"", 0, 0, fmt::format("cannot lock state file {}: cannot open {}: {}", path_, lp, strerr(errno))};
  int rc;
  while ((rc = ::flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
  }
  if (rc != 0) {
    if (errno == EWOULDBLOCK) {
      if (on_wait) on_wait("waiting for lock on " + lp);
      rc = flock_blocking(fd);
    }
    if (rc != 0) {
      int e = errno;
      ::close(fd);
      return Error{"", 0, 0, fmt::format("cannot lock state file {}: {}", path_, strerr(e))};
    }
  }
  lock_fd_ = fd;
  return true;
}

void StateFile::unlock() {
  std::lock_guard guard(mu_);
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing the last fd of the description releases the flock
  lock_fd_ = -1;
}

int StateFile::acquire(int& temp_fd) {
  temp_fd = -1;
  if (lock_fd_ >= 0) return lock_fd_;
  int fd = open_lock_file(lock_path());
  if (fd < 0) return -1;
  if (flock_blocking(fd) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  temp_fd = fd;
  return fd;
}

namespace {
struct FdCloser {
  int& fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};
}  // namespace

void StateFile::remove_stale_temporaries() {
  const std::string dir = dir_of(path_);
  const std::string prefix = base_of(path_) + ".tmp.";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* ent = ::readdir(d)) {
    std::string_view name(ent->d_name);
    if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) continue;
    std::string_view pid = name.substr(prefix.size());
    if (pid.find_first_not_of("0123456789") != std::string_view::npos) continue;
    (void)::unlinkat(::dirfd(d), ent->d_name, 0);  // a directory of that name stays
  }
  ::closedir(d);
}

std::string StateFile::move_aside(int64_t now_wall_ms, std::string& aside) {
  const std::string base = corrupt_name(path_, now_wall_ms);
  int e = 0;
  for (int n = 1; n <= 1000; ++n) {
    aside = n == 1 ? base : base + "." + std::to_string(n);
    e = rename_noreplace(path_, aside);
    if (e != EEXIST) break;
  }
  if (e == 0) return {};
  aside.clear();
  return strerr(e);
}

EngineState StateFile::load(std::string& warning) { return load(warning, SystemClock().wall_ms()); }

EngineState StateFile::load(std::string& warning, int64_t now_wall_ms) {
  warning.clear();
  std::lock_guard guard(mu_);
  int temp_lock = -1;
  (void)acquire(temp_lock);  // without a lock file (read-only directory) we still read
  FdCloser release{temp_lock};

  auto aside = [&](const std::string& why) {
    std::string to;
    std::string err = move_aside(now_wall_ms, to);
    warning = err.empty() ? fmt::format("state file {}; moved aside to {}, starting fresh", why, to)
                          : fmt::format("state file {}; could not move it aside ({}), starting fresh", why, err);
    return EngineState{};
  };

  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // O_NONBLOCK: a FIFO must not hang us
  if (fd < 0) {
    if (errno == ENOENT) return {};
    return aside(fmt::format("{}: cannot read: {}", path_, strerr(errno)));
  }
  FdCloser close_fd{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return aside(fmt::format("{}: cannot read: {}", path_, strerr(errno)));
  if (!S_ISREG(st.st_mode)) {
    // Renaming /dev/null or a directory aside would be worse than the problem.
    warning = fmt::format("state file {}: not a regular file; starting fresh, and it will not be saved", path_);
    return {};
  }
  std::string text;
  text.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got_bytes = 0;
  for (;;) {
    if (got_bytes == text.size()) text.resize(text.size() + 65536);  // the file may have grown
    ssize_t n = ::read(fd, text.data() + got_bytes, text.size() - got_bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      return aside(fmt::format("{}: cannot read: {}", path_, strerr(errno)));
    }
    if (n == 0) break;
    got_bytes += static_cast<std::size_t>(n);
  }
  text.resize(got_bytes);
  // Nothing to lose in an empty file; `touch state.json` is a natural first step.
  if (text.empty()) return {};
  auto parsed = from_json(text);
  if (!parsed) {
    Error e = parsed.error();
    e.file = path_;
    return aside(e.str());
  }
  return std::move(*parsed);
}

Result<bool> StateFile::save(const EngineState& s, int64_t now_wall_ms) {
  const std::string text = to_json(s, now_wall_ms);  // before the lock: keep the locked time short
  std::lock_guard guard(mu_);
  auto fail = [&](int e) { return Error{"", 0, 0, fmt::format("cannot save state to {}: {}", path_, strerr(e))}; };

  int temp_lock = -1;
  if (acquire(temp_lock) < 0) return fail(errno);
  FdCloser release{temp_lock};

  mode_t mode = 0600;  // keys come from log lines (addresses, user names): private by default
  struct stat st;
  if (::stat(path_.c_str(), &st) == 0) {
    // rename() would replace a device node or a FIFO (think --state /dev/null as root).
    if (!S_ISREG(st.st_mode))
      return Error{"", 0, 0, fmt::format("cannot save state to {}: not a regular file", path_)};
    mode = st.st_mode & 0777;
  }
  if (!cleaned_) {
    cleaned_ = true;
    remove_stale_temporaries();
  }
  const std::string tmp = path_ + ".tmp." + std::to_string(::getpid());
  if (int e = write_temporary(tmp, text, mode); e != 0) return fail(e);
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return fail(e);
  }
  // Makes the rename itself durable. Its failure is not reported: the new
  // file is already in place, and after a power loss the directory holds the
  // old file or the new one, either of them whole.
  int dfd = ::open(dir_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return true;
}

}  // namespace swthrottle::state
