-- Flush (fleet = "batched", alerts): a host's counts since its last flush of
-- this window. (host, seq) makes it idempotent: a seq not above the host's
-- last one (q:<host>) adds nothing, so a retry after a lost reply is never
-- counted twice. Deltas older than the window are not added and counted as
-- late. Claims as Alert does; a retry whose first try claimed answers
-- claimed again (ep still holds its episode).
--   ARGV[5] now_bucket  ARGV[6] host (1..128 bytes)  ARGV[7] seq (>= 1)
--   ARGV[8..11] the claim (claim_args)  ARGV[12] n (0..4096), then n triples:
--   bucket, event (< E), count (>= 1)
--   -> {1, late_count, nb, claimed, suppressed, duplicate, E, count_0 .. count_E-1}
local n = tonumber(ARGV[12])
if n == nil or n ~= math.floor(n) or n < 0 or n > 4096 then return {0, 'deltas (ARGV[12]) must be 0..4096'} end
local B, E, ttl, k = common(12 + 3 * n)
local now = num(5, 0, MAXN, 'now_bucket')
local host = str(6, 1, 128, 'host')
local seq = num(7, 1, MAXN, 'seq')
local limit, t, cooldown, episode = claim_args(8)
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
  elseif total(counts) >= limit then
    claimed, sup = claim(t, cooldown, episode, math.max(1, added))
  end
end
touch(ttl, k)
return with_counts({1, late, nb, claimed, sup, dup and 1 or 0}, counts)
