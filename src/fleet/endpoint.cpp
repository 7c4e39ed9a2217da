#include "fleet/endpoint.h"

#include <algorithm>
#include <charconv>

namespace swthrottle::fleet {

namespace {

constexpr uint16_t kRedisPort = 6379;
constexpr uint16_t kSentinelPort = 26379;

// A whole decimal number in [lo, hi], or nothing.
bool parse_number(std::string_view s, long lo, long hi, long& out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && out >= lo && out <= hi;
}

Error fail(std::string what) { return Error{"", 0, 0, "redis: " + std::move(what)}; }

// "HOST[:PORT]" or "[V6]:PORT" into `a`; "" when fine, else what is wrong.
std::string parse_host_port(std::string_view item, std::string_view url, uint16_t default_port, Address& a) {
  a.port = default_port;
  std::string_view host = item;
  std::string_view port;
  bool has_port = false;
  if (item.starts_with('[')) {  // [::1]:6379
    const auto close = item.find(']');
    if (close == std::string_view::npos) return "unclosed '[' in \"" + std::string(url) + "\"";
    host = item.substr(1, close - 1);
    const std::string_view rest = item.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) return "junk after ']' in \"" + std::string(url) + "\"";
    has_port = !rest.empty();
    port = has_port ? rest.substr(1) : rest;
  } else if (const auto colon = item.rfind(':'); colon != std::string_view::npos) {
    host = item.substr(0, colon);
    port = item.substr(colon + 1);
    has_port = true;
  }
  if (has_port) {
    long p = 0;
    if (!parse_number(port, 1, 65535, p)) return "port \"" + std::string(port) + "\" out of range (1-65535)";
    a.port = static_cast<uint16_t>(p);
  }
  if (host.empty()) return "no host in \"" + std::string(url) + "\"";
  a.host = std::string(host);
  return "";
}

// "H[:P],H[:P]" into `out`.
std::string parse_servers(std::string_view list, std::string_view url, uint16_t default_port,
                          std::vector<Address>& out) {
  while (true) {
    const auto comma = list.find(',');
    Address a;
    if (std::string why = parse_host_port(list.substr(0, comma), url, default_port, a); !why.empty()) return why;
    out.push_back(std::move(a));
    if (comma == std::string_view::npos) return "";
    list.remove_prefix(comma + 1);
  }
}

bool is_master_name(std::string_view s) {
  return !s.empty() && s.size() <= 128 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

Result<int> parse_db(std::string_view text) {
  long db = 0;
  if (!text.empty() && !parse_number(text, 0, 65535, db))
    return fail("database \"" + std::string(text) + "\" is not a number from 0 to 65535");
  return static_cast<int>(db);
}

Result<Endpoint> parse_unix(std::string_view url, Endpoint e) {
  std::string_view path = url.substr(5);
  if (const auto q = path.find("?db="); q != std::string_view::npos) {
    long db = 0;
    if (!parse_number(path.substr(q + 4), 0, 65535, db))
      return fail("database in \"" + std::string(url) + "\" is not a number from 0 to 65535");
    e.db = static_cast<int>(db);
    path = path.substr(0, q);
  }
  if (path.empty()) return fail("\"unix:\" needs a socket path (unix:/run/redis/redis.sock)");
  Address a;
  a.unix_path = std::string(path);
  e.servers.push_back(std::move(a));
  return e;
}

// redis+sentinel://H[:P],H[:P]/NAME[/DB] (rest: after the scheme)
Result<Endpoint> parse_sentinel(std::string_view url, std::string_view rest, Endpoint e) {
  e.topology = Topology::Sentinel;
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos)
    return fail("\"" + std::string(url) + "\" names no primary: redis+sentinel://HOST:PORT,HOST:PORT/NAME");
  if (std::string why = parse_servers(rest.substr(0, slash), url, kSentinelPort, e.servers); !why.empty())
    return fail(why);
  std::string_view name = rest.substr(slash + 1);
  if (const auto db_slash = name.find('/'); db_slash != std::string_view::npos) {
    auto db = parse_db(name.substr(db_slash + 1));
    if (!db) return db.error();
    e.db = *db;
    name = name.substr(0, db_slash);
  }
  if (!is_master_name(name))
    return fail("primary name \"" + std::string(name) + "\" must be 1 to 128 letters, digits, '.', '_' or '-'");
  e.master = std::string(name);
  return e;
}

// redis+cluster://H[:P],H[:P] (rest: after the scheme)
Result<Endpoint> parse_cluster(std::string_view url, std::string_view rest, Endpoint e) {
  e.topology = Topology::Cluster;
  const auto slash = rest.find('/');
  if (slash != std::string_view::npos) {
    if (!rest.substr(slash + 1).empty())
      return fail("a cluster has database 0 only: no /DB in \"" + std::string(url) + "\"");
    rest = rest.substr(0, slash);
  }
  if (std::string why = parse_servers(rest, url, kRedisPort, e.servers); !why.empty()) return fail(why);
  return e;
}

}  // namespace

std::string Address::label() const {
  if (!unix_path.empty()) return "unix:" + unix_path;
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

Result<Endpoint> parse_endpoint(std::string_view url) {
  Endpoint e;
  e.text = std::string(url);
  if (url.starts_with("unix:")) return parse_unix(url, std::move(e));
  static constexpr std::string_view kSingle = "redis://", kSentinel = "redis+sentinel://",
                                    kCluster = "redis+cluster://";
  std::string_view scheme;
  for (const std::string_view s : {kSingle, kSentinel, kCluster})
    if (url.starts_with(s)) scheme = s;
  if (scheme.empty()) {
    if (url.starts_with("rediss://") || url.starts_with("rediss+"))
      return fail("TLS (rediss://) is not supported: use a unix socket, or a TLS tunnel to a local port");
    return fail("\"" + std::string(url) +
                "\" is neither redis://HOST[:PORT][/DB], unix:PATH, redis+sentinel://HOST:PORT,.../NAME nor "
                "redis+cluster://HOST:PORT,...");
  }
  std::string_view rest = url.substr(scheme.size());
  if (rest.find('@') != std::string_view::npos)
    return fail("no password in the URL (it would show in ps); set SWTHROTTLE_REDIS_PASSWORD");
  if (scheme == kSentinel) return parse_sentinel(url, rest, std::move(e));
  if (scheme == kCluster) return parse_cluster(url, rest, std::move(e));
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    auto db = parse_db(rest.substr(slash + 1));
    if (!db) return db.error();
    e.db = *db;
    rest = rest.substr(0, slash);
  }
  if (rest.find(',') != std::string_view::npos)
    return fail("redis:// names one server; several are redis+sentinel:// or redis+cluster://");
  Address a;
  if (std::string why = parse_host_port(rest, url, kRedisPort, a); !why.empty()) return fail(why);
  e.servers.push_back(std::move(a));
  return e;
}

}  // namespace swthrottle::fleet
