-- Throttle: one line of a fleet throttle (fleet = "exact"). Moves the window
-- to max(nb, bucket, now_bucket); when its sum is below the limit, passes
-- and counts one in the line's bucket (in nb when the bucket is late).
--   ARGV[5] bucket  ARGV[6] now_bucket  ARGV[7] limit (Y)       (E must be 1)
--   -> {1, passed, late, nb, sum}
local B, E, ttl, k = common(7)
local bucket = num(5, 0, MAXN, 'bucket')
local now = num(6, 0, MAXN, 'now_bucket')
local limit = num(7, 0, MAXN, 'limit')
one_event(E)
if bad then return {0, bad} end
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
