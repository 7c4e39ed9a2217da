// The fleet's scripts on the wire: a request's arguments encoded, EVALSHA
// pipelined, NOSCRIPT answered by a reload, and the replies decoded. The Lua
// itself is in src/fleet/lua/ (prelude.lua, the helpers and argument checks
// every script shares, then one file per Op), embedded at build time.
//
// Argument encoding. Every script takes KEYS[1] = the window's hash and the
// same first four ARGV, then its own (each .lua file lists them); every
// number is a decimal string of 1 to 14 digits (0 <= n < 10^14: exact in
// Lua's doubles, and printed back by tostring() as the same digits, so a
// bucket number is the same field name on every host):
//
//   all      ARGV[1] B (1..600)  ARGV[2] E (1..64)  ARGV[3] ttl_ms (>= 1)
//            ARGV[4] k: the original key ("" when hash_key is not a digest)
//   Throttle bucket, now_bucket, limit
//   Alert    bucket, now_bucket, events (64 characters '0'/'1'), then the claim
//   Claim    t_ms, cooldown_ms, episode
//   Resolve  episode
//   Read     now_bucket
//   Flush    now_bucket, host, seq, then the claim, then n and n triples
//            (bucket, event, count)
//   Lease    bucket, want, limit, return_bucket, return_n, host
//   the claim: limit (0: never), t_ms, cooldown_ms, episode
//
// Replies are arrays of integers led by a status: {0, "why"} is a refusal
// (nothing was changed: every argument is checked before the first write),
// and {1, ...} an answer, as each .lua file says.
//
// In the hash, a bucket field <b>:<e> and a sum s:<e> exist only while they
// are above zero, and sup only while a line is held back: absent is zero.
//
// No refusal of a bucket "more than B*2^8 ahead of nb" (DESIGN.md §8.3): a
// jump of any size costs one bounded rebuild, and a window kept alive by a
// long cooldown (TTL = max(2X, cooldown) + 10 s) may legitimately come back
// many windows later; refusing it would freeze it for good. The 10^14 bound
// on every number is the guard against corrupt input.
#include "fleet/scripts.h"

#include <hiredis/hiredis.h>

#include <array>
#include <string_view>

#include "fleet/lua_scripts.h"  // generated from src/fleet/lua/*.lua (cmake/embed_lua.cmake)

namespace swthrottle::fleet {

namespace {

const std::array<std::string, kOps>& sources() {
  static const std::array<std::string, kOps> all = [] {
    std::array<std::string, kOps> s;
    auto with_prelude = [](std::string_view body) { return std::string(lua::prelude) + std::string(body); };
    s[static_cast<std::size_t>(Op::Throttle)] = with_prelude(lua::throttle);
    s[static_cast<std::size_t>(Op::Alert)] = with_prelude(lua::alert);
    s[static_cast<std::size_t>(Op::Claim)] = with_prelude(lua::claim);
    s[static_cast<std::size_t>(Op::Resolve)] = with_prelude(lua::resolve);
    s[static_cast<std::size_t>(Op::Read)] = with_prelude(lua::read);
    s[static_cast<std::size_t>(Op::Flush)] = with_prelude(lua::flush);
    s[static_cast<std::size_t>(Op::Lease)] = with_prelude(lua::lease);
    return s;
  }();
  return all;
}

// The ARGV of a request, after EVALSHA sha 1 key (see the top of the file).
std::vector<std::string> encode(const Request& r) {
  std::vector<std::string> a;
  a.reserve(11);
  a.push_back(std::to_string(r.shape.buckets));
  a.push_back(std::to_string(r.shape.events));
  a.push_back(std::to_string(r.shape.ttl_ms));
  a.push_back(r.original_key);
  switch (r.op) {
    case Op::Throttle:
      a.push_back(std::to_string(r.bucket));
      a.push_back(std::to_string(r.now_bucket));
      a.push_back(std::to_string(r.limit));
      break;
    case Op::Alert: {
      a.push_back(std::to_string(r.bucket));
      a.push_back(std::to_string(r.now_bucket));
      std::string bits(64, '0');
      for (std::size_t i = 0; i < 64; ++i)
        if ((r.events >> i) & 1U) bits[i] = '1';
      a.push_back(std::move(bits));
      a.push_back(std::to_string(r.limit));
      a.push_back(std::to_string(r.t_ms));
      a.push_back(std::to_string(r.cooldown_ms));
      a.push_back(r.episode);
      break;
    }
    case Op::Claim:
      a.push_back(std::to_string(r.t_ms));
      a.push_back(std::to_string(r.cooldown_ms));
      a.push_back(r.episode);
      break;
    case Op::Resolve: a.push_back(r.episode); break;
    case Op::Read: a.push_back(std::to_string(r.now_bucket)); break;
    case Op::Flush:
      a.push_back(std::to_string(r.now_bucket));
      a.push_back(r.host);
      a.push_back(std::to_string(r.seq));
      a.push_back(std::to_string(r.limit));
      a.push_back(std::to_string(r.t_ms));
      a.push_back(std::to_string(r.cooldown_ms));
      a.push_back(r.episode);
      a.push_back(std::to_string(r.deltas.size()));
      for (const Delta& d : r.deltas) {
        a.push_back(std::to_string(d.bucket));
        a.push_back(std::to_string(d.event));
        a.push_back(std::to_string(d.n));
      }
      break;
    case Op::Lease:
      a.push_back(std::to_string(r.bucket));
      a.push_back(std::to_string(r.want));
      a.push_back(std::to_string(r.limit));
      a.push_back(std::to_string(r.return_bucket));
      a.push_back(std::to_string(r.return_n));
      a.push_back(r.host);
      break;
  }
  return a;
}

bool is_error(const redisReply& r, std::string_view prefix) {
  return r.type == REDIS_REPLY_ERROR && std::string_view(r.str, r.len).starts_with(prefix);
}

// Element i of an integer array, as a non-negative number.
bool element(const redisReply& r, std::size_t i, uint64_t& out) {
  if (i >= r.elements || r.element[i]->type != REDIS_REPLY_INTEGER || r.element[i]->integer < 0) return false;
  out = static_cast<uint64_t>(r.element[i]->integer);
  return true;
}

// The script's answer into `out`; false when it does not have the shape of its op.
bool parse_answer(const redisReply& r, Op op, Reply& out) {
  uint64_t v[7] = {};
  auto get = [&](std::size_t from, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
      if (!element(r, from + i, v[i])) return false;
    return true;
  };
  auto counts = [&](std::size_t at) {
    uint64_t e = 0;
    if (!element(r, at, e) || e > 64 || r.elements != at + 1 + e) return false;
    out.ncounts = static_cast<uint32_t>(e);
    for (std::size_t i = 0; i < e; ++i)
      if (!element(r, at + 1 + i, out.counts[i])) return false;
    return true;
  };
  switch (op) {
    case Op::Throttle:
      if (r.elements != 5 || !get(1, 4)) return false;
      out.passed = v[0] != 0;
      out.late = v[1] != 0;
      out.newest_bucket = static_cast<int64_t>(v[2]);
      out.sum = v[3];
      return true;
    case Op::Alert:
      if (!get(1, 4)) return false;
      out.late = v[0] != 0;
      out.newest_bucket = static_cast<int64_t>(v[1]);
      out.claimed = v[2] != 0;
      out.suppressed = v[3];
      return counts(5);
    case Op::Claim:
      if (r.elements != 4 || !get(1, 3)) return false;
      out.claimed = v[0] != 0;
      out.suppressed = v[1];
      out.newest_bucket = static_cast<int64_t>(v[2]);
      return true;
    case Op::Resolve:
      if (r.elements != 4 || !get(1, 3)) return false;
      out.resolved = v[0] != 0;
      out.suppressed = v[1];
      out.newest_bucket = static_cast<int64_t>(v[2]);
      return true;
    case Op::Read:
      if (!get(1, 1)) return false;
      out.newest_bucket = static_cast<int64_t>(v[0]);
      return counts(2);
    case Op::Flush:
      if (!get(1, 5)) return false;
      out.late_count = v[0];
      out.late = v[0] != 0;
      out.newest_bucket = static_cast<int64_t>(v[1]);
      out.claimed = v[2] != 0;
      out.suppressed = v[3];
      out.duplicate = v[4] != 0;
      return counts(6);
    case Op::Lease:
      if (r.elements != 7 || !get(1, 6)) return false;
      out.granted = v[0];
      out.sum = v[1];
      out.newest_bucket = static_cast<int64_t>(v[2]);
      out.late = v[3] != 0;
      out.room_bucket = static_cast<int64_t>(v[4]);
      out.active_hosts = v[5];
      return true;
  }
  return false;
}

void parse(const redisReply& r, Op op, Reply& out) {
  out = Reply{};
  if (r.type == REDIS_REPLY_ERROR) {
    out.error = std::string(r.str, r.len);
    return;
  }
  if (r.type != REDIS_REPLY_ARRAY || r.elements < 2 || r.element[0]->type != REDIS_REPLY_INTEGER) {
    out.error = "fleet script: unexpected reply";
    return;
  }
  if (r.element[0]->integer == 0) {
    const redisReply* why = r.element[1];
    out.error = "fleet script refused its arguments: " +
                (why->type == REDIS_REPLY_STRING ? std::string(why->str, why->len) : std::string("?"));
    return;
  }
  if (!parse_answer(r, op, out)) {
    out = Reply{};
    out.error = "fleet script: unexpected reply";
    return;
  }
  out.ok = true;
}

void fail(std::vector<Reply>& replies, std::span<const std::size_t> which, const std::string& error) {
  for (const std::size_t i : which) {
    replies[i] = Reply{};
    replies[i].error = error;
  }
}

}  // namespace

const std::string& Scripts::source(Op op) { return sources()[static_cast<std::size_t>(op)]; }

bool Scripts::load(RedisConnection& conn) {
  shas_.clear();
  error_.clear();
  for (const auto& text : sources()) {
    const std::string_view argv[] = {"SCRIPT", "LOAD", text};
    conn.append(argv);
  }
  std::vector<std::string> shas;
  for (std::size_t i = 0; i < kOps; ++i) {
    ReplyPtr r = conn.read_reply();
    if (!r) {
      error_ = conn.error();
      return false;
    }
    if (r->type != REDIS_REPLY_STRING) {
      if (error_.empty()) {
        const std::string text = r->type == REDIS_REPLY_ERROR ? std::string(r->str, r->len) : "unexpected reply";
        // NOAUTH and the like say what to set, without "SCRIPT LOAD".
        const std::string why = conn.explain(text);
        error_ = why != text ? why : "SCRIPT LOAD: " + text;
      }
      continue;  // read the other replies: the pipeline stays in step
    }
    shas.emplace_back(r->str, r->len);
  }
  if (!error_.empty()) return false;
  shas_ = std::move(shas);
  return true;
}

void Scripts::append(RedisConnection& conn, const Request& request, bool asking) const {
  if (asking) {
    const std::string_view argv[] = {"ASKING"};
    conn.append(argv);
  }
  const std::vector<std::string> args = encode(request);
  std::vector<std::string_view> argv;
  argv.reserve(args.size() + 4);
  argv.insert(argv.end(), {"EVALSHA", shas_[static_cast<std::size_t>(request.op)], "1", request.hash_key});
  argv.insert(argv.end(), args.begin(), args.end());
  conn.append(argv);
}

Scripts::Answer Scripts::read(RedisConnection& conn, const Request& request, bool asking, Reply& out) const {
  out = Reply{};
  if (asking) {
    ReplyPtr ok = conn.read_reply();  // +OK, or an error the EVALSHA after it shows too
    if (!ok) {
      out.error = conn.error();
      return Answer::Lost;
    }
  }
  ReplyPtr r = conn.read_reply();
  if (!r) {
    out.error = conn.error();
    return Answer::Lost;
  }
  if (is_error(*r, "NOSCRIPT")) return Answer::NoScript;
  if (is_error(*r, "MOVED ") || is_error(*r, "ASK ")) {
    out.error = std::string(r->str, r->len);
    return Answer::Redirected;
  }
  parse(*r, request.op, out);
  return Answer::Done;
}

bool Scripts::run(RedisConnection& conn, std::span<const Request> requests, std::vector<Reply>& replies) {
  replies.assign(requests.size(), Reply{});
  std::vector<std::size_t> pending(requests.size());
  for (std::size_t i = 0; i < pending.size(); ++i) pending[i] = i;
  if (pending.empty()) return conn.connected();
  if (shas_.empty() && !load(conn)) {
    fail(replies, pending, error_);
    return conn.connected();
  }
  for (int round = 0;; ++round) {
    for (const std::size_t i : pending) append(conn, requests[i], false);
    std::vector<std::size_t> noscript;
    for (std::size_t n = 0; n < pending.size(); ++n) {
      const std::size_t i = pending[n];
      const Answer a = read(conn, requests[i], false, replies[i]);
      if (a == Answer::Lost) {
        fail(replies, std::span(pending).subspan(n), conn.error());
        fail(replies, noscript, conn.error());
        return false;
      }
      if (a == Answer::NoScript) noscript.push_back(i);
      // Redirected: a single server in a cluster's place; the error says so.
    }
    if (noscript.empty()) return true;
    if (round > 0) {
      fail(replies, noscript, "fleet script: NOSCRIPT again right after SCRIPT LOAD");
      return true;
    }
    // The server lost its script cache (restart, failover, SCRIPT FLUSH):
    // NOSCRIPT means "not run", so sending these again never counts twice.
    ++reloads_;
    if (!load(conn)) {
      fail(replies, noscript, error_);
      return conn.connected();
    }
    pending = std::move(noscript);
  }
}

}  // namespace swthrottle::fleet
