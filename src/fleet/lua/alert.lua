-- Alert: one matched line of a fleet alert (fleet = "exact"). Moves the
-- window as Throttle does; unless the bucket is late, adds one to each event
-- the line is; with a limit, claims once the sum of all events reaches it.
-- A late event adds nothing and never claims (as a host's own window: a late
-- event is not evaluated), but the sums are still answered.
--   ARGV[5] bucket  ARGV[6] now_bucket  ARGV[7] events: 64 characters '0'/'1',
--   character i+1 = event i (none at or past E)  ARGV[8..11] the claim (claim_args)
--   -> {1, late, nb, claimed, suppressed, E, count_0 .. count_E-1}
local B, E, ttl, k = common(11)
local bucket = num(5, 0, MAXN, 'bucket')
local now = num(6, 0, MAXN, 'now_bucket')
local events = str(7, 64, 64, 'events')
local limit, t, cooldown, episode = claim_args(8)
if bad then return {0, bad} end
if string.find(events, '[^01]') then return {0, 'events (ARGV[7]) must be 64 characters 0 or 1'} end
if string.find(events, '1', E + 1, true) then return {0, 'events (ARGV[7]) names an event at or past E = ' .. E} end
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
if limit > 0 and not late and total(counts) >= limit then claimed, sup = claim(t, cooldown, episode) end
touch(ttl, k)
return with_counts({1, late and 1 or 0, nb, claimed, sup}, counts)
