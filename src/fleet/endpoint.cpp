#include "fleet/endpoint.h"

#include <charconv>

namespace swthrottle::fleet {

namespace {

// A whole decimal number in [lo, hi], or nothing.
bool parse_number(std::string_view s, long lo, long hi, long& out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && out >= lo && out <= hi;
}

Error fail(std::string what) { return Error{"", 0, 0, "redis: " + std::move(what)}; }

}  // namespace

Result<Endpoint> parse_endpoint(std::string_view url) {
  Endpoint e;
  e.text = std::string(url);
  if (url.starts_with("unix:")) {
    std::string_view path = url.substr(5);
    if (const auto q = path.find("?db="); q != std::string_view::npos) {
      long db = 0;
      if (!parse_number(path.substr(q + 4), 0, 65535, db))
        return fail("database in \"" + std::string(url) + "\" is not a number from 0 to 65535");
      e.db = static_cast<int>(db);
      path = path.substr(0, q);
    }
    if (path.empty()) return fail("\"unix:\" needs a socket path (unix:/run/redis/redis.sock)");
    e.unix_path = std::string(path);
    return e;
  }
  if (!url.starts_with("redis://")) {
    if (url.starts_with("rediss://"))
      return fail("TLS (rediss://) is not supported: use a unix socket, or a TLS tunnel to a local port");
    return fail("\"" + std::string(url) + "\" is neither redis://HOST[:PORT][/DB] nor unix:PATH");
  }
  std::string_view rest = url.substr(8);
  if (rest.find('@') != std::string_view::npos)
    return fail("no password in the URL (it would show in ps); set SWTHROTTLE_REDIS_PASSWORD");
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    const std::string_view db_text = rest.substr(slash + 1);
    long db = 0;
    if (!db_text.empty() && !parse_number(db_text, 0, 65535, db))
      return fail("database \"" + std::string(db_text) + "\" is not a number from 0 to 65535");
    e.db = static_cast<int>(db);
    rest = rest.substr(0, slash);
  }
  std::string_view host = rest;
  if (rest.starts_with('[')) {  // [::1]:6379
    const auto close = rest.find(']');
    if (close == std::string_view::npos) return fail("unclosed '[' in \"" + std::string(url) + "\"");
    host = rest.substr(1, close - 1);
    rest = rest.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) return fail("junk after ']' in \"" + std::string(url) + "\"");
    rest = rest.empty() ? rest : rest.substr(1);
    if (!rest.empty()) {
      long port = 0;
      if (!parse_number(rest, 1, 65535, port)) return fail("port \"" + std::string(rest) + "\" out of range");
      e.port = static_cast<uint16_t>(port);
    }
  } else if (const auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    long port = 0;
    if (!parse_number(rest.substr(colon + 1), 1, 65535, port))
      return fail("port \"" + std::string(rest.substr(colon + 1)) + "\" out of range (1-65535)");
    e.port = static_cast<uint16_t>(port);
  }
  if (host.empty()) return fail("no host in \"" + std::string(url) + "\"");
  e.host = std::string(host);
  return e;
}

}  // namespace swthrottle::fleet
