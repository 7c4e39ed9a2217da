-- Read: the window's per-event sums at now_bucket (a boundary check). Moves
-- a window that exists; creates none.
--   ARGV[5] now_bucket
--   -> {1, nb, E, count_0 .. count_E-1}
local B, E, ttl, k = common(5)
local now = num(5, 0, MAXN, 'now_bucket')
if bad then return {0, bad} end
local before = tonumber(redis.call('HGET', key, 'nb'))
local nb = advance(B, E, now, false)
if nb ~= nil and nb ~= before then touch(ttl, k) end
return with_counts({1, nb or 0}, sums(E))
