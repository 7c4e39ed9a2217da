-- Lease (fleet = "batched", throttles): moves the window to the host's
-- bucket; first takes back `return_n` unused permits of `return_bucket`
-- when that bucket is still in the window; then grants min(want, Y - sum)
-- permits, counted in the bucket at once (in nb when the bucket is late).
-- Refused (none granted): answers the first bucket at which the window, as
-- it stands, has room, so that the host asks no sooner.
--   ARGV[5] bucket  ARGV[6] want (>= 1)  ARGV[7] limit (Y)
--   ARGV[8] return_bucket  ARGV[9] return_n                    (E must be 1)
--   -> {1, granted, sum, nb, late, room}
local B, E, ttl, k = common(9)
local bucket = num(5, 0, MAXN, 'bucket')
local want = num(6, 1, MAXN, 'want')
local limit = num(7, 0, MAXN, 'limit')
local rb = num(8, 0, MAXN, 'return_bucket')
local rn = num(9, 0, MAXN, 'return_n')
one_event(E)
if bad then return {0, bad} end
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
