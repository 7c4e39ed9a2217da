-- The helpers every fleet script starts with (scripts.cpp sends this text
-- ahead of each script's own). Arguments are checked before the first
-- write: a helper that finds one wrong sets `bad`, and the script answers
-- {0, bad} without having changed anything.
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
-- The four arguments every script takes first, with the count of all.
local function common(n)
  argc(n)
  local B = num(1, 1, 600, 'B')
  local E = num(2, 1, 64, 'E')
  local ttl = num(3, 1, MAXN, 'ttl_ms')
  local k = str(4, 0, 4096, 'k')
  return B, E, ttl, k
end
-- A throttle's window counts one event.
local function one_event(E)
  if not bad and E ~= 1 then bad = 'a throttle counts one event (E = 1), not ' .. E end
end
-- The claim's arguments at ARGV[i..i+3]: limit (0: never claim), t_ms,
-- cooldown_ms, episode (1..256 bytes when limit > 0).
local function claim_args(i)
  local limit = num(i, 0, MAXN, 'limit')
  local t = num(i + 1, 0, MAXN, 't_ms')
  local cooldown = num(i + 2, 0, MAXN, 'cooldown_ms')
  local episode = str(i + 3, 0, 256, 'episode')
  if not bad and limit > 0 and episode == '' then bad = 'episode (ARGV[' .. (i + 3) .. ']) is empty' end
  return limit, t, cooldown, episode
end
-- The fields that are not nb, s:<e>, <b>:<e> or q:<host>: a rebuild keeps
-- them (and the q: fields). A new kind of field must be added here.
local META = {'last', 'ep', 'sup', 'k', 'ha'}
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
local function total(counts)
  local t = 0
  for e = 1, #counts do t = t + counts[e] end
  return t
end
-- An answer: the values of `head`, then E and the per-event counts.
local function with_counts(head, counts)
  head[#head + 1] = #counts
  for e = 1, #counts do head[#head + 1] = counts[e] end
  return head
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
