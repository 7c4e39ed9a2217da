-- Lease (fleet = "batched", throttles): moves the window to the host's
-- bucket; first takes back `return_n` unused permits of `return_bucket`
-- when that bucket is still in the window; then grants
--   min(want, Y - sum, max(1, floor((Y - sum) / (2 * H_active))))
-- permits, counted in the bucket at once (in nb when the bucket is late).
-- H_active is the number of hosts that took a lease in the window, this
-- one included (field ha: one "<bucket>:<host>" line per host): while the
-- window fills, each host holds less than its share of half of what is
-- left, so other hosts' unused permits never starve one for long.
-- Refused (none granted): answers the first bucket at which the window, as
-- it stands, has room, so that the host asks no sooner.
--   ARGV[5] bucket  ARGV[6] want (>= 1)  ARGV[7] limit (Y)
--   ARGV[8] return_bucket  ARGV[9] return_n  ARGV[10] host (1..128 bytes,
--   no newline)                                                 (E must be 1)
--   -> {1, granted, sum, nb, late, room, H_active}
local B, E, ttl, k = common(10)
local bucket = num(5, 0, MAXN, 'bucket')
local want = num(6, 1, MAXN, 'want')
local limit = num(7, 0, MAXN, 'limit')
local rb = num(8, 0, MAXN, 'return_bucket')
local rn = num(9, 0, MAXN, 'return_n')
local host = str(10, 1, 128, 'host')
one_event(E)
if not bad and string.find(host, '\n', 1, true) then bad = 'host (ARGV[10]) holds a newline' end
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
-- The hosts that took a lease in the window, this one now among them.
local active = {}
local ha = redis.call('HGET', key, 'ha') or ''
local lines = {}
for line in string.gmatch(ha, '[^\n]+') do
  local at = string.find(line, ':', 1, true)
  local b = tonumber(string.sub(line, 1, at - 1))
  local h = string.sub(line, at + 1)
  if h ~= host and b >= nb - B + 1 then
    active[#active + 1] = h
    lines[#lines + 1] = line
  end
end
lines[#lines + 1] = S(math.max(bucket, nb - B + 1)) .. ':' .. host
redis.call('HSET', key, 'ha', table.concat(lines, '\n'))
local hosts = #active + 1
local sum = tonumber(redis.call('HGET', key, 's:0')) or 0
local left = math.max(0, limit - sum)
local g = math.min(want, left, math.max(1, math.floor(left / (2 * hosts))))
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
return {1, g, sum, nb, late and 1 or 0, room, hosts}
