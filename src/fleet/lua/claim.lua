-- Claim: the compare-and-set of "alert once per cooldown, fleet-wide", for a
-- `when` the host found true (or an alert it raised alone, while Redis was
-- unreachable).
--   ARGV[5] t_ms  ARGV[6] cooldown_ms  ARGV[7] episode (1..256 bytes)
--   -> {1, claimed, suppressed, nb}
local B, E, ttl, k = common(7)
local t = num(5, 0, MAXN, 't_ms')
local cooldown = num(6, 0, MAXN, 'cooldown_ms')
local episode = str(7, 1, 256, 'episode')
if bad then return {0, bad} end
local claimed, sup = claim(t, cooldown, episode)
touch(ttl, k)
return {1, claimed, sup, tonumber(redis.call('HGET', key, 'nb')) or 0}
