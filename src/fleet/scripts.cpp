// The Lua scripts of fleet windows, and their pipelined EVALSHA.
//
// Argument encoding. Every script takes KEYS[1] = the window's hash and the
// same first four ARGV, then its own; every number is a decimal string of
// 1 to 14 digits (0 <= n < 10^14: exact in Lua's doubles, and printed back
// by tostring() as the same digits, so a bucket number is the same field
// name on every host):
//
//   all      ARGV[1] B (1..600)  ARGV[2] E (1..64)  ARGV[3] ttl_ms (>= 1)
//            ARGV[4] k: the original key ("" when hash_key is not a digest)
//   Throttle ARGV[5] bucket  ARGV[6] now_bucket  ARGV[7] limit (Y)      (E must be 1)
//   Alert    ARGV[5] bucket  ARGV[6] now_bucket  ARGV[7] events: 64 characters
//            '0'/'1', character i+1 = event i (none at or past E)
//            ARGV[8] limit (0: never claim)  ARGV[9] t_ms  ARGV[10] cooldown_ms
//            ARGV[11] episode (1..256 bytes when limit > 0)
//   Claim    ARGV[5] t_ms  ARGV[6] cooldown_ms  ARGV[7] episode (1..256 bytes)
//   Resolve  ARGV[5] episode (1..256 bytes)
//   Read     ARGV[5] now_bucket
//   Flush    ARGV[5] now_bucket  ARGV[6] host (1..128 bytes)  ARGV[7] seq (>= 1)
//            ARGV[8] limit  ARGV[9] t_ms  ARGV[10] cooldown_ms  ARGV[11] episode
//            ARGV[12] n (0..4096), then n triples: bucket, event (< E), count (>= 1)
//   Lease    ARGV[5] bucket  ARGV[6] want (>= 1)  ARGV[7] limit (Y)
//            ARGV[8] return_bucket  ARGV[9] return_n               (E must be 1)
//
// Replies are arrays of integers led by a status: {0, "why"} is a refusal
// (nothing was changed: every argument is checked before the first write),
// and {1, ...} an answer:
//
//   Throttle {1, passed, late, nb, sum}
//   Alert    {1, late, nb, claimed, suppressed, E, count_0 .. count_E-1}
//   Claim    {1, claimed, suppressed, nb}
//   Resolve  {1, resolved, suppressed, nb}
//   Read     {1, nb, E, count_0 .. count_E-1}
//   Flush    {1, late_count, nb, claimed, suppressed, duplicate, E, count_0 .. count_E-1}
//   Lease    {1, granted, sum, nb, late, room}  (room: when refused, the first
//            bucket at which the window as it stands has room; else 0)
//
// In the hash, a bucket field <b>:<e> and a sum s:<e> exist only while they
// are above zero, and sup only while a line is held back: absent is zero.
//
// No refusal of a bucket "more than B*2^8 ahead of nb" (DESIGN.md §8.3): a
// jump of any size costs one bounded rebuild here, and a window kept alive
// by a long cooldown (TTL = max(2X, cooldown) + 10 s) may legitimately
// come back many windows later; refusing it would freeze it for good. The
// 10^14 bound on every number is the guard against corrupt input.
//
// Late events: Throttle decides a late line at nb and counts it there;
// Alert adds nothing for a late event but still returns the sums; it never
// claims for one (as a host's own window: a late event is not evaluated).
#include "fleet/scripts.h"

#include <hiredis/hiredis.h>

#include <array>
#include <string_view>

namespace swthrottle::fleet {

namespace {

constexpr std::string_view kPrelude = R"LUA(
local key = KEYS[1]
local MAXN = 99999999999999
local bad = nil
-- Numbers handed to redis.call as decimal digits (never "1e+13").
local function S(n) return string.format('%d', n) end
local function argc(n)
  if #KEYS ~= 1 then
    bad = 'expected 1 key, got ' .. #KEYS
  elseif #ARGV ~= n then
    bad = 'expected ' .. n .. ' arguments, got ' .. #ARGV
  end
end
-- ARGV[i] as a whole number in lo..hi; on failure sets `bad` and returns lo.
local function num(i, lo, hi, name)
  if bad then return lo end
  local s = ARGV[i]
  if type(s) ~= 'string' or #s == 0 or #s > 14 or not string.find(s, '^%d+$') then
    bad = name .. ' (ARGV[' .. i .. ']) is not a whole number from 0 to 10^14-1: "' ..
      string.sub(tostring(s), 1, 32) .. '"'
    return lo
  end
  local n = tonumber(s)
  if n < lo or n > hi then
    bad = name .. ' (ARGV[' .. i .. ']) = ' .. s .. ' is outside ' .. lo .. '..' .. hi
    return lo
  end
  return n
end
-- ARGV[i] as a string of minlen..maxlen bytes.
local function str(i, minlen, maxlen, name)
  if bad then return '' end
  local s = ARGV[i]
  if type(s) ~= 'string' or #s < minlen or #s > maxlen then
    bad = name .. ' (ARGV[' .. i .. ']) must have ' .. minlen .. ' to ' .. maxlen .. ' bytes'
    return ''
  end
  return s
end
local function common(n)
  argc(n)
  local B = num(1, 1, 600, 'B')
  local E = num(2, 1, 64, 'E')
  local ttl = num(3, 1, MAXN, 'ttl_ms')
  local k = str(4, 0, 4096, 'k')
  return B, E, ttl, k
end
-- The fields that are not nb, s:<e>, <b>:<e> or q:<host>: a rebuild keeps
-- them (and the q: fields). A new kind of field must be added here.
local META = {'last', 'ep', 'sup', 'k'}
-- Rebuilds the hash with nb = target, keeping the buckets from target-B+1
-- to nb (none after a jump of B or more) with their sums, and META: one
-- DEL, and at most (nb-lo+1)*E fields read.
local function rebuild(B, E, nb, target)
  local lo = target - B + 1
  local meta = {}
  local st = redis.call('HMGET', key, unpack(META))
  for j = 1, #META do
    if st[j] then
      meta[#meta + 1] = META[j]
      meta[#meta + 1] = st[j]
    end
  end
  -- The hosts' flush sequences (q:<host>, batched windows), one per host.
  local all = redis.call('HKEYS', key)
  local seqs = {}
  for j = 1, #all do
    if string.sub(all[j], 1, 2) == 'q:' then seqs[#seqs + 1] = all[j] end
  end
  if #seqs > 0 then
    local vals = redis.call('HMGET', key, unpack(seqs))
    for j = 1, #seqs do
      meta[#meta + 1] = seqs[j]
      meta[#meta + 1] = vals[j]
    end
  end
  local groups = {}
  if lo <= nb then
    for e = 0, E - 1 do
      local f = {}
      for b = lo, nb do f[#f + 1] = S(b) .. ':' .. e end
      local vals = redis.call('HMGET', key, unpack(f))
      local g = {}
      local sum = 0
      for j = 1, #f do
        if vals[j] then
          g[#g + 1] = f[j]
          g[#g + 1] = vals[j]
          sum = sum + tonumber(vals[j])
        end
      end
      if sum > 0 then
        g[#g + 1] = 's:' .. e
        g[#g + 1] = S(sum)
        groups[#groups + 1] = g
      end
    end
  end
  redis.call('DEL', key)
  redis.call('HSET', key, 'nb', S(target), unpack(meta))
  for j = 1, #groups do redis.call('HSET', key, unpack(groups[j])) end
end
-- Moves the window's newest bucket nb on to `target` when that is newer:
-- the buckets that leave the window are deleted and taken off s:<e>. When
-- more than 2/3 of the window leaves (or all of it: a jump of B or more),
-- the hash is rebuilt from what stays instead (measured: writing a kept
-- field back costs about twice deleting one). So at most 2/3*B*E bucket
-- fields are touched. Without nb yet, nb becomes target (when create). Returns nb
-- after the step (nil: no window, and nothing was created).
local function advance(B, E, target, create)
  local nb = tonumber(redis.call('HGET', key, 'nb'))
  if nb == nil then
    if not create then return nil end
    redis.call('HSET', key, 'nb', S(target))
    return target
  end
  if target <= nb then return nb end
  local gap = target - nb
  if 3 * gap > 2 * B then
    rebuild(B, E, nb, target)
    return target
  end
  local lo = nb - B + 1
  local hi = target - B
  for e = 0, E - 1 do
    local f = {}
    for b = lo, hi do f[#f + 1] = S(b) .. ':' .. e end
    local vals = redis.call('HMGET', key, unpack(f))
    local gone = 0
    for j = 1, #f do gone = gone + (tonumber(vals[j]) or 0) end
    if gone > 0 then
      redis.call('HDEL', key, unpack(f))
      if redis.call('HINCRBY', key, 's:' .. e, S(-gone)) <= 0 then redis.call('HDEL', key, 's:' .. e) end
    end
  end
  redis.call('HSET', key, 'nb', S(target))
  return target
end
local function sums(E)
  local f = {}
  for e = 0, E - 1 do f[#f + 1] = 's:' .. e end
  local vals = redis.call('HMGET', key, unpack(f))
  local out = {}
  for e = 1, E do out[e] = tonumber(vals[e]) or 0 end
  return out
end
-- After a write: the TTL in wall time, and the original key.
local function touch(ttl, k)
  if k ~= '' then redis.call('HSET', key, 'k', k) end
  redis.call('PEXPIRE', key, S(ttl))
end
-- The claim's compare-and-set: returns claimed (0/1), suppressed. A refused
-- claim holds back `held` lines (1; a flush: the events it added).
local function claim(t, cooldown, episode, held)
  local st = redis.call('HMGET', key, 'last', 'sup')
  local last = tonumber(st[1])
  local sup = tonumber(st[2]) or 0
  if last == nil or t - last >= cooldown then
    redis.call('HSET', key, 'last', S(t), 'ep', episode)
    redis.call('HDEL', key, 'sup')
    return 1, sup
  end
  redis.call('HINCRBY', key, 'sup', S(held or 1))
  return 0, 0
end
)LUA";

constexpr std::string_view kThrottle = R"LUA(
local B, E, ttl, k = common(7)
local bucket = num(5, 0, MAXN, 'bucket')
local now = num(6, 0, MAXN, 'now_bucket')
local limit = num(7, 0, MAXN, 'limit')
if bad then return {0, bad} end
if E ~= 1 then return {0, 'a throttle counts one event (E = 1), not ' .. E} end
local nb = advance(B, E, math.max(bucket, now), true)
local late = bucket < nb - B + 1
local sum = tonumber(redis.call('HGET', key, 's:0')) or 0
local passed = 0
if sum < limit then
  redis.call('HINCRBY', key, S(late and nb or bucket) .. ':0', 1)
  sum = redis.call('HINCRBY', key, 's:0', 1)
  passed = 1
end
touch(ttl, k)
return {1, passed, late and 1 or 0, nb, sum}
)LUA";

constexpr std::string_view kAlert = R"LUA(
local B, E, ttl, k = common(11)
local bucket = num(5, 0, MAXN, 'bucket')
local now = num(6, 0, MAXN, 'now_bucket')
local events = str(7, 64, 64, 'events')
local limit = num(8, 0, MAXN, 'limit')
local t = num(9, 0, MAXN, 't_ms')
local cooldown = num(10, 0, MAXN, 'cooldown_ms')
local episode = str(11, 0, 256, 'episode')
if bad then return {0, bad} end
if string.find(events, '[^01]') then return {0, 'events (ARGV[7]) must be 64 characters 0 or 1'} end
if string.find(events, '1', E + 1, true) then return {0, 'events (ARGV[7]) names an event at or past E = ' .. E} end
if limit > 0 and episode == '' then return {0, 'episode (ARGV[11]) is empty'} end
local nb = advance(B, E, math.max(bucket, now), true)
local late = bucket < nb - B + 1
if not late then
  for e = 0, E - 1 do
    if string.byte(events, e + 1) == 49 then
      redis.call('HINCRBY', key, S(bucket) .. ':' .. e, 1)
      redis.call('HINCRBY', key, 's:' .. e, 1)
    end
  end
end
local counts = sums(E)
local claimed, sup = 0, 0
if limit > 0 and not late then
  local total = 0
  for e = 1, E do total = total + counts[e] end
  if total >= limit then claimed, sup = claim(t, cooldown, episode) end
end
touch(ttl, k)
local out = {1, late and 1 or 0, nb, claimed, sup, E}
for e = 1, E do out[#out + 1] = counts[e] end
return out
)LUA";

constexpr std::string_view kClaim = R"LUA(
local B, E, ttl, k = common(7)
local t = num(5, 0, MAXN, 't_ms')
local cooldown = num(6, 0, MAXN, 'cooldown_ms')
local episode = str(7, 1, 256, 'episode')
if bad then return {0, bad} end
local claimed, sup = claim(t, cooldown, episode)
touch(ttl, k)
return {1, claimed, sup, tonumber(redis.call('HGET', key, 'nb')) or 0}
)LUA";

constexpr std::string_view kResolve = R"LUA(
local B, E, ttl, k = common(5)
local episode = str(5, 1, 256, 'episode')
if bad then return {0, bad} end
local st = redis.call('HMGET', key, 'ep', 'sup', 'nb')
local nb = tonumber(st[3]) or 0
if st[1] ~= episode then return {1, 0, 0, nb} end
redis.call('HDEL', key, 'ep')
touch(ttl, k)
return {1, 1, tonumber(st[2]) or 0, nb}
)LUA";

constexpr std::string_view kRead = R"LUA(
local B, E, ttl, k = common(5)
local now = num(5, 0, MAXN, 'now_bucket')
if bad then return {0, bad} end
local before = tonumber(redis.call('HGET', key, 'nb'))
local nb = advance(B, E, now, false)
if nb ~= nil and nb ~= before then touch(ttl, k) end
local out = {1, nb or 0, E}
local counts = sums(E)
for e = 1, E do out[#out + 1] = counts[e] end
return out
)LUA";

constexpr std::string_view kFlush = R"LUA(
local n = tonumber(ARGV[12])
if n == nil or n ~= math.floor(n) or n < 0 or n > 4096 then return {0, 'deltas (ARGV[12]) must be 0..4096'} end
local B, E, ttl, k = common(12 + 3 * n)
local now = num(5, 0, MAXN, 'now_bucket')
local host = str(6, 1, 128, 'host')
local seq = num(7, 1, MAXN, 'seq')
local limit = num(8, 0, MAXN, 'limit')
local t = num(9, 0, MAXN, 't_ms')
local cooldown = num(10, 0, MAXN, 'cooldown_ms')
local episode = str(11, 0, 256, 'episode')
if bad then return {0, bad} end
if limit > 0 and episode == '' then return {0, 'episode (ARGV[11]) is empty'} end
local target = now
local d = {}
for i = 0, n - 1 do
  local b = num(13 + 3 * i, 0, MAXN, 'delta bucket')
  local e = num(14 + 3 * i, 0, E - 1, 'delta event')
  local c = num(15 + 3 * i, 1, MAXN, 'delta count')
  d[#d + 1] = {b, e, c}
  if b > target then target = b end
end
if bad then return {0, bad} end
local last_seq = tonumber(redis.call('HGET', key, 'q:' .. host)) or 0
local dup = seq <= last_seq
local nb = advance(B, E, target, true)
local late = 0
local added = 0
if not dup then
  for i = 1, #d do
    local b, e, c = d[i][1], d[i][2], d[i][3]
    if b < nb - B + 1 then
      late = late + c
    else
      added = added + c
      redis.call('HINCRBY', key, S(b) .. ':' .. e, S(c))
      redis.call('HINCRBY', key, 's:' .. e, S(c))
    end
  end
  redis.call('HSET', key, 'q:' .. host, S(seq))
end
local counts = sums(E)
local claimed, sup = 0, 0
if limit > 0 then
  if dup then
    if episode ~= '' and redis.call('HGET', key, 'ep') == episode then claimed = 1 end
  else
    local total = 0
    for e = 1, E do total = total + counts[e] end
    if total >= limit then claimed, sup = claim(t, cooldown, episode, math.max(1, added)) end
  end
end
touch(ttl, k)
local out = {1, late, nb, claimed, sup, dup and 1 or 0, E}
for e = 1, E do out[#out + 1] = counts[e] end
return out
)LUA";

constexpr std::string_view kLease = R"LUA(
local B, E, ttl, k = common(9)
local bucket = num(5, 0, MAXN, 'bucket')
local want = num(6, 1, MAXN, 'want')
local limit = num(7, 0, MAXN, 'limit')
local rb = num(8, 0, MAXN, 'return_bucket')
local rn = num(9, 0, MAXN, 'return_n')
if bad then return {0, bad} end
if E ~= 1 then return {0, 'a throttle counts one event (E = 1), not ' .. E} end
local nb = advance(B, E, bucket, true)
if rn > 0 and rb >= nb - B + 1 and rb <= nb then
  local have = tonumber(redis.call('HGET', key, S(rb) .. ':0')) or 0
  local back = math.min(rn, have)
  if back > 0 then
    if redis.call('HINCRBY', key, S(rb) .. ':0', S(-back)) <= 0 then redis.call('HDEL', key, S(rb) .. ':0') end
    if redis.call('HINCRBY', key, 's:0', S(-back)) <= 0 then redis.call('HDEL', key, 's:0') end
  end
end
local late = bucket < nb - B + 1
local sum = tonumber(redis.call('HGET', key, 's:0')) or 0
local g = math.min(want, math.max(0, limit - sum))
local room = 0
if g > 0 then
  redis.call('HINCRBY', key, S(late and nb or bucket) .. ':0', S(g))
  sum = redis.call('HINCRBY', key, 's:0', S(g))
else
  -- Refused: the first bucket at which the window, as it stands, has room
  -- (enough of its counts have left), so that the host asks no sooner.
  local f = {}
  for b = nb - B + 1, nb do f[#f + 1] = S(b) .. ':0' end
  local vals = redis.call('HMGET', key, unpack(f))
  local leaving = 0
  room = nb + B
  for j = 1, #f do
    leaving = leaving + (tonumber(vals[j]) or 0)
    if sum - leaving < limit then
      room = nb - B + j + B
      break
    end
  end
end
touch(ttl, k)
return {1, g, sum, nb, late and 1 or 0, room}
)LUA";

const std::array<std::string, kOps>& sources() {
  static const std::array<std::string, kOps> all = [] {
    std::array<std::string, kOps> s;
    const std::string prelude(kPrelude);
    s[static_cast<std::size_t>(Op::Throttle)] = prelude + std::string(kThrottle);
    s[static_cast<std::size_t>(Op::Alert)] = prelude + std::string(kAlert);
    s[static_cast<std::size_t>(Op::Claim)] = prelude + std::string(kClaim);
    s[static_cast<std::size_t>(Op::Resolve)] = prelude + std::string(kResolve);
    s[static_cast<std::size_t>(Op::Read)] = prelude + std::string(kRead);
    s[static_cast<std::size_t>(Op::Flush)] = prelude + std::string(kFlush);
    s[static_cast<std::size_t>(Op::Lease)] = prelude + std::string(kLease);
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
  uint64_t v[6] = {};
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
      if (r.elements != 6 || !get(1, 5)) return false;
      out.granted = v[0];
      out.sum = v[1];
      out.newest_bucket = static_cast<int64_t>(v[2]);
      out.late = v[3] != 0;
      out.room_bucket = static_cast<int64_t>(v[4]);
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
      if (error_.empty())
        error_ = "SCRIPT LOAD: " + (r->type == REDIS_REPLY_ERROR ? std::string(r->str, r->len) : "unexpected reply");
      continue;  // read the other replies: the pipeline stays in step
    }
    shas.emplace_back(r->str, r->len);
  }
  if (!error_.empty()) return false;
  shas_ = std::move(shas);
  return true;
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
    for (const std::size_t i : pending) {
      const Request& req = requests[i];
      const std::vector<std::string> args = encode(req);
      std::vector<std::string_view> argv;
      argv.reserve(args.size() + 4);
      argv.insert(argv.end(), {"EVALSHA", shas_[static_cast<std::size_t>(req.op)], "1", req.hash_key});
      argv.insert(argv.end(), args.begin(), args.end());
      conn.append(argv);
    }
    std::vector<std::size_t> noscript;
    for (std::size_t n = 0; n < pending.size(); ++n) {
      const std::size_t i = pending[n];
      ReplyPtr r = conn.read_reply();
      if (!r) {
        fail(replies, std::span(pending).subspan(n), conn.error());
        fail(replies, noscript, conn.error());
        return false;
      }
      if (is_error(*r, "NOSCRIPT")) {
        noscript.push_back(i);
        continue;
      }
      parse(*r, requests[i].op, replies[i]);
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
