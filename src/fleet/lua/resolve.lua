-- Resolve: ends the episode `episode` when it is still the window's current
-- one (deletes ep); else nothing (another host's episode, or resolved).
--   ARGV[5] episode (1..256 bytes)
--   -> {1, resolved, suppressed, nb}
local B, E, ttl, k = common(5)
local episode = str(5, 1, 256, 'episode')
if bad then return {0, bad} end
local st = redis.call('HMGET', key, 'ep', 'sup', 'nb')
local nb = tonumber(st[3]) or 0
if st[1] ~= episode then return {1, 0, 0, nb} end
redis.call('HDEL', key, 'ep')
touch(ttl, k)
return {1, 1, tonumber(st[2]) or 0, nb}
