/**
 * The longest a bucket key lives: a bucket more than a day of refill in debt is let go after a day (full again).
 * Without it a caller's max_tokens x n, or a provider's usage, deep enough made PEXPIRE fail the script, and the
 * instance took Redis for down.
 */
const MAX_BUCKET_TTL_MS = 86_400_000;

/**
 * The Redis side of bucket-math.ts, as Lua scripts Redis runs atomically: one decision per request across every instance.
 * Time is Redis's own (TIME), so the instances' clocks need not agree. Every key expires once it holds nothing a full
 * bucket would not: a bucket when it has refilled, the in-flight set after its lease (SLOT_LEASE_MS), spend after its period.
 * Levels go back as strings: Redis turns a Lua number into an integer.
 */
const LEVEL = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function level(key, cap)
  if cap <= 0 then return 0 end
  local v = redis.call('HMGET', key, 'level', 'at')
  local l, at = tonumber(v[1]), tonumber(v[2])
  if l == nil or at == nil then return cap end
  return math.min(cap, l + math.max(0, now - at) * cap / 60000)
end
local function store(key, cap, l)
  redis.call('HSET', key, 'level', tostring(l), 'at', now)
  -- At most a day: a bucket that deep in debt (an absurd max_tokens x n, or usage) would ask an expiry Redis refuses.
  redis.call('PEXPIRE', key, math.min(math.ceil((cap - l) * 60000 / cap) + 1000, ${MAX_BUCKET_TTL_MS}))
end
`;

/**
 * KEYS: requests bucket, tokens bucket, in-flight set, month spend, day spend, reserved USD (hash by request id).
 * ARGV: rpm, tpm, concurrent, usd/month, usd/day (0: none), request id, lease ms, reserved tokens, reserved USD.
 * The in-flight set (request id -> when last renewed) is kept for concurrent_requests and for budgets' reservations:
 * an entry older than its lease is gone, and its reservation with it.
 */
export const ADMIT_SCRIPT = `${LEVEL}
local rpm, tpm, conc = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local usdM, usdD = tonumber(ARGV[4]), tonumber(ARGV[5])
local lease, rTok, rUsd = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local budget = usdM > 0 or usdD > 0
local tracked = conc > 0 or budget
local req, tok = level(KEYS[1], rpm), level(KEYS[2], tpm)
local function answer(refused, retryMs) return {refused, tostring(retryMs), tostring(req), tostring(tok)} end
if tracked then
  local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now - lease)
  for _, id in ipairs(expired) do redis.call('HDEL', KEYS[6], id) end
  if #expired > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - lease) end
end
if budget then
  local reserved = 0
  for _, usd in ipairs(redis.call('HVALS', KEYS[6])) do reserved = reserved + tonumber(usd) end
  if usdM > 0 and tonumber(redis.call('GET', KEYS[4]) or '0') + reserved >= usdM then return answer('quota', 0) end
  if usdD > 0 and tonumber(redis.call('GET', KEYS[5]) or '0') + reserved >= usdD then return answer('quota', 0) end
end
if conc > 0 and redis.call('ZCARD', KEYS[3]) >= conc then return answer('concurrent', 1000) end
if rpm > 0 and req < 1 then return answer('requests', math.ceil((1 - req) * 60000 / rpm)) end
if tpm > 0 and tok <= 0 then return answer('tokens', math.ceil(-tok * 60000 / tpm) + 1) end
if rpm > 0 then
  req = req - 1
  store(KEYS[1], rpm, req)
end
if tpm > 0 and rTok > 0 then
  tok = tok - rTok
  store(KEYS[2], tpm, tok)
end
if tracked then
  redis.call('ZADD', KEYS[3], now, ARGV[6])
  redis.call('PEXPIRE', KEYS[3], lease)
  if budget and rUsd > 0 then
    redis.call('HSET', KEYS[6], ARGV[6], ARGV[9])
    redis.call('PEXPIRE', KEYS[6], lease)
  end
end
return answer('', 0)
`;

/**
 * KEYS: tokens bucket, in-flight set, month spend, day spend, reserved USD.
 * ARGV: tpm, tokens used minus tokens reserved, request id ('' for none), usd, month ttl s, day ttl s.
 */
export const SETTLE_SCRIPT = `${LEVEL}
local tpm, delta, usd = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4])
if tpm > 0 and delta ~= 0 then store(KEYS[1], tpm, math.min(tpm, level(KEYS[1], tpm) - delta)) end
if ARGV[3] ~= '' then
  redis.call('ZREM', KEYS[2], ARGV[3])
  redis.call('HDEL', KEYS[5], ARGV[3])
end
if usd > 0 then
  redis.call('INCRBYFLOAT', KEYS[3], ARGV[4])
  redis.call('EXPIRE', KEYS[3], tonumber(ARGV[5]))
  redis.call('INCRBYFLOAT', KEYS[4], ARGV[4])
  redis.call('EXPIRE', KEYS[4], tonumber(ARGV[6]))
end
return 1
`;

/** KEYS: in-flight set, reserved USD. ARGV: lease ms, then the ids of this instance's requests still in flight. */
export const RENEW_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], lease)
redis.call('PEXPIRE', KEYS[2], lease)
return 1
`;

/** Spend keys outlive their period by a margin, so a restart near its end still finds it. */
export const MONTH_SPEND_TTL_S = 32 * 86_400;
export const DAY_SPEND_TTL_S = 2 * 86_400;

export interface CallerKeys {
  readonly requests: string;
  readonly tokens: string;
  readonly inFlight: string;
  readonly reserved: string;
  readonly month: string;
  readonly day: string;
}

/** `chat-routing-gateway:{search-team}:requests`: the braces keep one caller's keys in one Redis Cluster slot. */
export function callerKeys(caller: string, month: string, day: string): CallerKeys {
  const base = `chat-routing-gateway:{${caller}}`;
  return { requests: `${base}:requests`, tokens: `${base}:tokens`, inFlight: `${base}:in-flight`, reserved: `${base}:reserved-usd`, month: `${base}:usd:${month}`, day: `${base}:usd:${day}` };
}
