import { DedupeStoreError, WebhookReceiverError } from '../errors.js';
import { DEFAULT_CLAIM_TTL_MS, DEFAULT_DEDUPE_TTL_MS, type DedupeStoreTimingOptions, type ClaimOptions, type DedupeClaim, type DedupeStore, type MarkProcessedOptions, type ReleaseOptions, type SubjectWaiter } from './dedupe-store.js';
import { checkWaiter, DELIVERY_ATTEMPTS, failedAgo, RETRY_WAIT_FACTORS, retryDueWindow, SAME_ARRIVAL_MS, sentMsAgoOf } from './subject-record.js';
import { minRetryDelayOption, positiveIntegerOption, replyWindowOption } from './positive-integer-option.js';
import { toRedisCommand, toRedisSubscribe, withCommandTimeout, type RedisClientLike, type RedisSubscriberLike } from './redis-command.js';
import { assertOptionNames, optionNames } from '../option-names.js';
import { watchLinesOver } from './wake-ups.js';

/**
 * Options of {@link createRedisDedupeStore}.
 *
 * @example
 * ```ts
 * createRedisDedupeStore({ client: redis, keyPrefix: 'shop-eu:webhooks:', commandTimeoutMs: 1_000 });
 * ```
 */
export interface RedisDedupeStoreOptions extends DedupeStoreTimingOptions {
  /** An ioredis client, a connected node-redis client, or a command function (see {@link RedisClientLike}). */
  client: RedisClientLike;
  /** Prefix of every key. Default `capi:webhook:`. */
  keyPrefix?: string;
  /** Clock in ms, injectable for tests. Default `Date.now`. */
  now?: () => number;
  /**
   * How long to wait for Redis before answering 503, in ms. Default 2,000. Clients queue
   * commands while reconnecting, so without this bound a delivery would hang past the
   * service's 30-second window instead of being retried.
   */
  commandTimeoutMs?: number;
  /**
   * A second connection to the same Redis, for wake-ups: ioredis `redis.duplicate()`, a
   * connected node-redis `client.duplicate()`, or a subscribe function (see
   * {@link RedisSubscriberLike}). The store then publishes, on the channel `<keyPrefix>lines`,
   * each subject that a delivery waiting in another process may now claim (its holder settled,
   * or the first in line left), and that delivery claims it at once. Without it a delivery
   * waiting for a subject held in another process tries again every 10 to 250 ms, so a
   * hand-over between processes takes up to 250 ms. Not the `client` itself: a connection that
   * subscribes can send no other command. Close it with the client when the server stops.
   */
  subscriber?: RedisSubscriberLike;
}

const PROCESSED = 'processed:';
const CLAIM_PREFIX = 'processing:';
// One string per subject, so that every script touches one key (Redis Cluster). Its first line
// is the state: `processed:<digest>`, `released`, or
// `processing:<token>|<failures>|<since>|<due until>|<claim expires at>|<claimed at>[|e]` (the token is
// `<uuid>:<digest>`; failures: failed attempts of that event before this claim; since: the
// event's place in the subject's order, when it first arrived in ms; due until: when its event's
// retries stop coming, should it fail or expire (0 from the previous major); claimed at: when
// this attempt arrived; `|e`: its delivery is acknowledged early, so that no retry is due should
// the claim expire (a process of the previous version reads past it, and drops it when it renews
// the claim: a retry due then, as before); see SubjectRecord). A processed
// state's second line is `p<since>:<claimed at>:<failures>:<expires at>[:<repeated at>]` (the
// first two empty when unknown; repeated at: the arrival of the latest copy of its body that came
// sooner than its retry could, see SubjectRecord.repeatedAt, which a process of the previous
// version drops when it rewrites the line). The first line is what the previous major wrote and compares, so that its
// processes, during a rolling upgrade, still answer a retry of the latest event `processed`
// (they drop the second line; `processed:<digest>` alone reads as place 0, with no claim time).
// The next lines are the subject's retries due, one per failed event:
// `<a|s><failures>:<expires at>:<since>:<failed at>:<digest>` (ms), `s` once superseded. A copy
// of the state's body answered 409 (RetryDue.repeats: not newer than a processed event with its
// body) is `s0<failures>:...` while not superseded (read as flag `r`): a process of the previous
// version reads it as a superseded retry due (the leading 0 aside), which it answers as this
// version answers a repeat in the common cases (`duplicate` while that state is the latest,
// `superseded` after a newer event) and consumes; once it rewrites the line, the 0 is gone and
// the retry due stays superseded.
// The last lines are the subject's line, first first: `w<expires at>|<waiter id>` for a place,
// `l<expires at>|<waiter id>` for one given back (leaveLine; see LinePlace.left). Ids have no
// `:` or `|`, so that no reading of the lines above can take them for a retry due. A place whose
// delivery told its body goes on `|<arrived at>|<due until>|<digest>` (LinePlace.digest: should
// it lapse unanswered, settleLapsed makes it a retry due), and so does the mark it leaves then,
// `l<due until>|<waiter id>|...`, or when its 409 is recorded (see withLapsedPlaces); the
// digest comes last, as in a retry due, since it may hold `|`. Rolling upgrade: a process of the
// previous version reads `([wl])(%d+)|([^\n]+)`, so the whole tail is the id for it, which never
// equals one of its own waiters': such a place holds its deliveries back until it lapses (it is
// a real place), a tail it rewrites is kept as it was, and it drops the place once it lapses (the
// place lapses unconverted, as it did before). Its wake-up for such a place names the tail as
// the waiter: the waiter it meant is not woken, and claims at its next try (up to 250 ms). A
// process of this version reads a place without the tail as one that told nothing, and lets it
// lapse as before. The key lives until the due until of every place that told its body.
// The key lives as long as its state or its last retry due, whichever is later, and a claim's
// key for the retry-due window more: a state expires by the time in it, and the release of a claim that
// outlived claimTtlMs still finds it and keeps its retry due, as the memory store does.
// Lua helpers shared by the scripts: split the value, read a processed state's line, keep the
// retries due and the places in line that are live, and read a claim's fields.
const SPLIT = `
local NL = string.char(10)
local WAITS = { ${RETRY_WAIT_FACTORS.join(', ')} }
local function split(v)
  local nl = string.find(v, NL, 1, true)
  if nl then return string.sub(v, 1, nl - 1), string.sub(v, nl + 1) end
  return v, ''
end
local function processedLine(rest)
  local line, since, claimedAt, failures, expires, repeated = string.match(rest, '^(p(%d+):(%d*):(%d*):(%d+)):?(%d*)')
  if line then return line, tonumber(since), tonumber(claimedAt), tonumber(failures) or 0, tonumber(expires), tonumber(repeated) end
  return nil, 0, nil, 0, math.huge, nil
end
-- The latest arrival of a processed state (latestArrivalOf in subject-record.ts): its event's
-- (its place, or its claim's arrival if earlier), or a later copy's that could not be its retry.
local function latestArrival(since, claimedAt, repeated)
  local arrival = math.min(since, claimedAt or since)
  if repeated and repeated > arrival then return repeated end
  return arrival
end
local function retries(rest, now)
  local live = {}
  -- (At the start of a line: a place's digest, at the end of its line, may hold anything.)
  for flag, count, expires, since, failed, digest in string.gmatch(NL .. rest, NL .. '([as])(%d+):(%d+):(%d+):(%d+):([^' .. NL .. ']+)') do
    if flag == 's' and string.sub(count, 1, 1) == '0' then flag = 'r' end
    if tonumber(expires) > now then table.insert(live, { flag, tonumber(count), tonumber(expires), tonumber(since), tonumber(failed), digest }) end
  end
  return live
end
-- The retry due in list that a copy of digest arriving at ms received can be (retryDueOf in
-- subject-record.ts): of its body, whose wait after its last failure is over; one not superseded
-- first, then the earliest in the subject's order.
local function retryDueOf(list, digest, received, minDelay)
  local due = nil
  for _, r in ipairs(list) do
    if r[6] == digest and received - r[5] >= minDelay * (WAITS[r[2]] or 1) then
      if not due or (due[1] == 's' and r[1] ~= 's') or ((due[1] == 's') == (r[1] == 's') and r[4] < due[4]) then due = r end
    end
  end
  return due
end
-- Whether the retries due in list hold one of digest in place since: the event of a claim, kept
-- already from a copy of its body answered while the claim held (hasRetryOfEvent in
-- subject-record.ts), so that the claim's expiry or failure adds no second one.
local function hasRetryOfEvent(list, digest, since)
  for _, r in ipairs(list) do if r[6] == digest and r[4] == since then return true end end
  return false
end
-- Every place in the line, lapsed or not: { expires, id, kind, extra, arrived, due, digest }, extra
-- being the text after the id ('' for a place that told no delivery), from which the last three come.
local function allPlaces(rest)
  local line = {}
  for kind, expires, tail in string.gmatch(NL .. rest, NL .. '([wl])(%d+)|([^' .. NL .. ']+)') do
    local id, arrived, due, digest = string.match(tail, '^([^|]+)|(%d+)|(%d+)|(.+)$')
    if id then table.insert(line, { tonumber(expires), id, kind, string.sub(tail, #id + 1), tonumber(arrived), tonumber(due), digest })
    else table.insert(line, { tonumber(expires), tail, kind, '' }) end
  end
  return line
end
local function waiting(rest, now)
  local line = {}
  for _, w in ipairs(allPlaces(rest)) do
    if w[1] > now then table.insert(line, w) end
  end
  return line
end
local function firstPlace(line)
  for _, w in ipairs(line) do if w[3] == 'w' then return w end end
  return nil
end
local function hasLeft(line, id)
  for _, w in ipairs(line) do if w[3] == 'l' and w[2] == id then return true end end
  return false
end
local function inLine(line, id)
  for _, w in ipairs(line) do if w[2] == id then return true end end
  return false
end
local function joined(first, live, line)
  local lines = { first }
  for _, r in ipairs(live) do
    local flag = r[1]
    if flag == 'r' then flag = 's0' end
    table.insert(lines, flag .. r[2] .. ':' .. r[3] .. ':' .. r[4] .. ':' .. r[5] .. ':' .. r[6])
  end
  for _, w in ipairs(line) do table.insert(lines, w[3] .. w[1] .. '|' .. w[2] .. w[4]) end
  return table.concat(lines, NL)
end
-- (A place that told its delivery may become a retry due once it lapses, until its due until.)
local function lastExpiry(live, line)
  local last = 0
  for _, r in ipairs(live) do if r[3] > last then last = r[3] end end
  for _, w in ipairs(line) do
    if w[1] > last then last = w[1] end
    if w[3] == 'w' and w[6] and w[6] > last then last = w[6] end
  end
  return last
end
-- Whether a state line is one this store writes (a value it did not write is left alone).
local function ours(state)
  return state == 'released' or state == 'processed' or string.sub(state, 1, 10) == 'processed:' or string.sub(state, 1, 11) == 'processing:'
end
-- The subject's value (nil when absent), its state ('released' when absent) and the lines after
-- it, for the scripts that only touch its line; nil when the store did not write the value.
local function readLine()
  local v = redis.call('GET', KEYS[1])
  local state, rest = 'released', ''
  if v then state, rest = split(v) end
  if not ours(state) then return nil end
  return v, state, rest
end
-- Appends a waiter's place to the value v (its lines stay as they are) unless it has one. With a
-- delivery (its digest, arrived at ms arrived, its retries due until ms due; digest nil: none),
-- the key lives until due at least: the place may become a retry due (settleLapsed).
local function join(v, line, id, left, now, digest, arrived, due)
  if inLine(line, id) then return end
  local ttl = -1
  if v then ttl = redis.call('PTTL', KEYS[1]) end
  if ttl < left then ttl = left end
  local extra = ''
  if digest and digest ~= '' then
    extra = '|' .. arrived .. '|' .. due .. '|' .. digest
    if ttl < due - now then ttl = due - now end
  end
  redis.call('SET', KEYS[1], (v or 'released') .. NL .. 'w' .. (now + left) .. '|' .. id .. extra, 'PX', ttl)
end
local function claimFields(state)
  local failures, since, dueUntil, expires, claimedAt = string.match(state, '^processing:[^|]*|(%d+)|(%d+)|(%d+)|(%d+)|?(%d*)')
  return tonumber(failures) or 0, tonumber(since) or 0, tonumber(dueUntil) or 0, tonumber(expires) or math.huge, tonumber(claimedAt)
end
-- A claim that expired (its process died mid-handler, or Redis lost its release) becomes a retry
-- due of its body in the list live, in its event's place, counted failed from when its attempt
-- arrived, until its retries stop coming (see withoutExpiredClaim in subject-record.ts).
local function expiredClaim(state, live, now, window)
  -- Acknowledged early: the service got its 2xx and sends nothing again (see ClaimOptions).
  if string.sub(state, -2) == '|e' then return end
  local failures, since, dueUntil, _, claimedAt = claimFields(state)
  local digest = string.match(state, '^processing:[^:|]*:([^|]*)|')
  failures = failures + 1
  if not digest or failures >= ${DELIVERY_ATTEMPTS} then return end
  local expires = dueUntil
  if expires == 0 then expires = (claimedAt or now) + window end
  if expires > now and not hasRetryOfEvent(live, digest, since) then table.insert(live, { 'a', failures, expires, since, claimedAt or 0, digest }) end
end
-- The place of a new event that arrived at ms place: that one, or the first after it that no
-- event of the subject holds (taken: the state's place, or nil; the retries due in live) and
-- whose next ms is not held either, so that events that arrive in the same ms keep the order the
-- store placed them in, also once the place one of them was moved past is free again (freePlace
-- in subject-record.ts).
local function freePlace(place, taken, live)
  local function held(p)
    if taken == p then return true end
    for _, r in ipairs(live) do if r[4] == p then return true end end
    return false
  end
  while held(place) or held(place + 1) do place = place + 1 end
  return place
end
-- Tells the process whose delivery is first in the subject's line that the subject may be its
-- now (it was settled, or the place before it given back): PUBLISH '<subject>|<waiter id>' on the
-- store's channel ('' when it has no subscriber), so that it claims at once instead of at its
-- next try. Best effort: pcall, so that a user who may not publish loses the wake-up, never
-- the write before it.
local function wake(channel, subject, line)
  if channel == '' then return end
  local first = firstPlace(line)
  if first then redis.pcall('PUBLISH', channel, subject .. '|' .. first[2]) end
end
-- When the service saw the attempt of a claim settled now fail (attemptFailedAt in
-- subject-record.ts): now, or the end of its reply window (window ms) counted from when it SENT
-- the attempt (sentAgo ms ago: '' when unknown, then the arrival claimedAt), never from before
-- the arrival less the window nor after the arrival.
local function failedAtOf(claimedAt, now, window, sentAgo)
  local at = claimedAt or now
  local sent = at
  local ago = tonumber(sentAgo)
  if ago and ago > 0 then
    sent = now - ago
    if sent < at - window then sent = at - window end
    if sent > at then sent = at end
  end
  if sent + window < now then return sent + window end
  return now
end
-- The state as a delivery answered without a claim sees it (expectSubjectRetry): whether it is
-- live, its digest and place, and a processed state's latest arrival (latestArrivalOf).
local function stateView(state, rest, now)
  if string.sub(state, 1, 11) == 'processing:' then
    local failures, since, dueUntil, expires, claimedAt = claimFields(state)
    if expires > now then
      return { live = true, digest = string.match(state, '^processing:[^:|]*:([^|]*)|'), place = since, claim = {
        failures = failures, claimedAt = claimedAt, dueUntil = dueUntil, early = string.sub(state, -2) == '|e' } }
    end
  elseif string.sub(state, 1, 10) == 'processed:' then
    local line, placed, at, _, expires, repeated = processedLine(rest)
    if expires > now then return { live = true, digest = string.sub(state, 11), place = placed, latest = latestArrival(placed, at, repeated) } end
  end
  return { live = false }
end
-- The retries due list once a delivery of digest that arrived at ms received failed at ms failed
-- without a claim (withFailedAttempt in subject-record.ts): one more failure of the retry due it
-- can be, or of the live claim whose retry it can be (isRetryOfClaim), or a new event placed
-- where it arrived, due until ms expires; nil when nothing is added (an arrival whose retry is
-- due already; not when the caller knows it is not, unrecorded: a delivery known by its place, or
-- a lapsed place whose copies were counted).
local function failedAttempt(list, view, digest, received, failed, expires, minDelay, unrecorded)
  local due = retryDueOf(list, digest, received, minDelay)
  local next = {}
  if due then
    for _, r in ipairs(list) do if r ~= due then table.insert(next, r) end end
    if due[2] + 1 < ${DELIVERY_ATTEMPTS} then table.insert(next, { due[1], due[2] + 1, due[3], due[4], failed, due[6] }) end
    return next
  end
  if not unrecorded then
    for _, r in ipairs(list) do if r[6] == digest and r[4] == received then return nil end end
  end
  -- A copy of the claim's body that comes once the claim's own retry could (its attempt counted
  -- failed at its arrival, as when a claim expires): that retry, one more failed attempt of the
  -- claim's event, in its place.
  local claim = view.claim
  if claim and view.digest == digest and not claim.early and claim.claimedAt and minDelay > 0
    and received - claim.claimedAt >= minDelay * (WAITS[claim.failures + 1] or 1) then
    for _, r in ipairs(list) do table.insert(next, r) end
    local failures = claim.failures + 2
    local dueBy = claim.dueUntil
    if dueBy == 0 then dueBy = expires end
    if failures < ${DELIVERY_ATTEMPTS} then table.insert(next, { 'a', failures, dueBy, view.place, failed, digest }) end
    return next
  end
  -- A copy of the body of the latest event received before it (the live state's, or a retry
  -- due's placed after it: latestEventBefore in subject-record.ts) repeats that state ('r');
  -- after another event's, it is the user going back.
  local flag, place = 'a', nil
  if view.live then place = view.place end
  -- Placed where it arrived, after the events placed in that ms before it.
  local since = freePlace(received, place, list)
  local latest, latestDigest = nil, nil
  if view.live and (view.place or 0) < since then latest, latestDigest = view.place or 0, view.digest end
  for _, r in ipairs(list) do
    if r[4] < since and (not latest or r[4] > latest) then latest, latestDigest = r[4], r[6] end
  end
  if latestDigest == digest then flag = 'r' end
  -- Recorded after the event placed next (a later delivery's 409 told before this place lapsed):
  -- that event repeats this one's state if it has its body, and nothing if not (nextRetryAfter in
  -- subject-record.ts).
  local after = nil
  for _, r in ipairs(list) do
    if r[4] > since and (not after or r[4] < after[4]) then after = r end
  end
  if after and view.live and view.place and view.place > since and view.place < after[4] then after = nil end
  for _, r in ipairs(list) do
    if r == after and r[6] == digest and r[1] == 'a' then table.insert(next, { 'r', r[2], r[3], r[4], r[5], r[6] })
    elseif r == after and r[6] ~= digest and r[1] == 'r' then table.insert(next, { 'a', r[2], r[3], r[4], r[5], r[6] })
    else table.insert(next, r) end
  end
  -- Received before the processed event, it is older than it.
  if view.latest and received < view.latest then flag = 's' end
  table.insert(next, { flag, 1, expires, since, failed, digest })
  return next
end
-- A place that lapsed while its delivery waited for an answer, and whose retries can still come.
local function lapsedUnanswered(w, now)
  return w[3] == 'w' and w[1] <= now and w[7] ~= nil and w[6] > now
end
-- Whether place w is that of the delivery of digest that arrived at ms received (within 2 ms:
-- SAME_ARRIVAL_MS in subject-record.ts).
local function placeOf(w, digest, received)
  return w[7] == digest and math.abs(w[5] - received) <= ${SAME_ARRIVAL_MS}
end
-- The mark of a place whose delivery's failure is recorded: given back, with its delivery, until
-- its retries stop coming.
local function answered(w)
  return { math.max(w[1], w[6]), w[2], 'l', w[4], w[5], w[6], w[7] }
end
-- Turns the places of the subject's line that lapsed unanswered into retries due, in their
-- places, and marks them (withLapsedPlaces in subject-record.ts); every script that reads the
-- line runs this first. Writes the value only when there is such a place.
local function settleLapsed(now, minDelay)
  local v = redis.call('GET', KEYS[1])
  if not v then return end
  local state, rest = split(v)
  if not ours(state) then return end
  local places = allPlaces(rest)
  local any = false
  for _, w in ipairs(places) do if lapsedUnanswered(w, now) then any = true end end
  if not any then return end
  local list = retries(rest, now)
  local line = {}
  for i, w in ipairs(places) do
    if w[1] > now then table.insert(line, w)
    elseif lapsedUnanswered(w, now) then
      -- Kept already: a retry due of its body and arrival that no other delivery's recorded
      -- failure accounts for (a mark with its delivery, 'l' with a digest, counted even once
      -- lapsed; or a place converted above).
      local recorded, others = 0, 0
      for _, r in ipairs(list) do if r[6] == w[7] and math.abs(r[4] - w[5]) <= ${SAME_ARRIVAL_MS} then recorded = recorded + 1 end end
      for j, o in ipairs(places) do
        if j ~= i and (o[3] == 'l' or (j < i and lapsedUnanswered(o, now))) and o[7] == w[7] and math.abs(o[5] - w[5]) <= ${SAME_ARRIVAL_MS} then others = others + 1 end
      end
      -- Judged as the subject stood when the place lapsed: a claim that has expired since (its
      -- process died too) still held the subject then, and a copy of its body repeats it.
      if recorded <= others then list = failedAttempt(list, stateView(state, rest, math.min(now, w[1])), w[7], w[5], w[5], w[6], minDelay, true) or list end
      table.insert(line, answered(w))
    end
  end
  -- The state's lines (a processed state's second line) stay as they are.
  local lines = { state }
  for l in string.gmatch(rest, '[^' .. NL .. ']+') do
    local c = string.sub(l, 1, 1)
    if c ~= 'a' and c ~= 's' and c ~= 'w' and c ~= 'l' then table.insert(lines, l) end
  end
  if state == 'released' and #list == 0 and #line == 0 then
    redis.call('DEL', KEYS[1])
    return
  end
  local ttl = redis.call('PTTL', KEYS[1])
  local left = lastExpiry(list, line) - now
  if ttl < left then ttl = left end
  if ttl > 0 then redis.call('SET', KEYS[1], joined(table.concat(lines, NL), list, line), 'PX', ttl)
  else redis.call('SET', KEYS[1], joined(table.concat(lines, NL), list, line), 'KEEPTTL') end
end
local function lifetime(ms, live, line, now)
  local left = lastExpiry(live, line) - now
  if left > ms then return left end
  return ms
end`;
// Releases the key only while it still holds this delivery's claim, so that releasing a claim
// that expired and was taken over by another process does not touch that process's claim. A
// released claim leaves no processed record (see SubjectRecord): the next delivery of the
// subject is dispatched whatever its body. With a retry expected (ARGV[3] = '1'), the event
// joins the retries due, in its place, until its retries stop coming; its wait is counted from
// when the service saw the attempt fail: now, or the end of its reply window if the handler
// outlived it (replyWindowMs).
// ARGV: claim prefix, digest, retry expected, now, retry-due window, DELIVERY_ATTEMPTS, wake-up
// channel, subject, reply window, ms since the service sent the attempt ('' when unknown),
// minRetryDelayMs (for settleLapsed).
const RELEASE_IF_OWNED = `${SPLIT}
settleLapsed(tonumber(ARGV[4]), tonumber(ARGV[11]))
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, #ARGV[1]) ~= ARGV[1] then return 0 end
local state, rest = split(v)
local now = tonumber(ARGV[4])
local failures, since, dueUntil, _, claimedAt = claimFields(state)
failures = failures + 1
local live = retries(rest, now)
local adds = ARGV[3] == '1' and failures < tonumber(ARGV[6]) and not hasRetryOfEvent(live, ARGV[2], since)
local line = waiting(rest, now)
if adds then
  local expires = dueUntil
  if expires == 0 then expires = now + tonumber(ARGV[5]) end
  local failedAt = failedAtOf(claimedAt, now, tonumber(ARGV[9]), ARGV[10])
  if expires > now then table.insert(live, { 'a', failures, expires, since, failedAt, ARGV[2] }) end
end
if #live == 0 and #line == 0 then return redis.call('DEL', KEYS[1]) end
redis.call('SET', KEYS[1], joined('released', live, line), 'PX', lastExpiry(live, line) - now)
wake(ARGV[7], ARGV[8], line)
return 1`;
// Records the processed digest unless another delivery holds the key now (a live claim of its
// own, or a processed event): as the memory store. The retries due of events received before
// this one are now superseded (an older event with the same body included); those of events
// received after it stay due. A claim that is no longer the key's (it expired meanwhile)
// supersedes nothing, and is placed after the events received since.
// Another delivery's claim that expired is a retry due first (expiredClaim). Answers 1 when the
// claim was still this one's, 2 when it was not but the key held no live state (the claim expired,
// or Redis lost the key), 0 when another delivery holds the key: 0 and 2 mean the claim was lost.
// With a retry expected (ARGV[8] = '1': the reply comes after the service's window), its own
// claim's event is a retry due too, in its place, as RELEASE_IF_OWNED adds it (withRetryDue in
// subject-record.ts).
// ARGV: claim prefix, processed state (first line), ttlMs, now, wake-up channel, subject,
// retry-due window, retry expected, reply window, ms since the service sent the attempt ('' when
// unknown), minRetryDelayMs (for settleLapsed).
const MARK_PROCESSED_IF_NOT_TAKEN = `${SPLIT}
settleLapsed(tonumber(ARGV[4]), tonumber(ARGV[11]))
local v = redis.call('GET', KEYS[1])
local state, rest = '', ''
if v then state, rest = split(v) end
local now = tonumber(ARGV[4])
local mine = v and string.sub(state, 1, #ARGV[1]) == ARGV[1]
if v and not mine then
  if string.sub(state, 1, 11) == 'processing:' then
    local _, _, _, expires = claimFields(state)
    if expires > now then return 0 end
  elseif state ~= 'released' then
    local _, _, _, _, expires = processedLine(rest)
    if expires > now then return 0 end
  end
end
local live = retries(rest, now)
if v and not mine and string.sub(state, 1, 11) == 'processing:' then expiredClaim(state, live, now, tonumber(ARGV[7])) end
local line = waiting(rest, now)
local since, place, claimedAt, failures = -math.huge, 0, '', ''
local due = nil
if mine then
  local claimedFailures, claimedSince, dueUntil, _, at = claimFields(state)
  since, place = claimedSince, claimedSince
  if at then claimedAt, failures = at, claimedFailures end
  if ARGV[8] == '1' and claimedFailures + 1 < ${DELIVERY_ATTEMPTS} and not hasRetryOfEvent(live, string.sub(ARGV[2], ${PROCESSED.length + 1}), claimedSince) then
    local expires = dueUntil
    if expires == 0 then expires = now + tonumber(ARGV[7]) end
    local failedAt = failedAtOf(at, now, tonumber(ARGV[9]), ARGV[10])
    if expires > now then due = { 'a', claimedFailures + 1, expires, claimedSince, failedAt, string.sub(ARGV[2], ${PROCESSED.length + 1}) } end
  end
else
  for _, r in ipairs(live) do if r[4] > place then place = r[4] end end
  place = place + 1
end
for _, r in ipairs(live) do
  if r[4] < since then r[1] = 's' end
end
if due then table.insert(live, due) end
local ttl = tonumber(ARGV[3])
local first = ARGV[2] .. NL .. 'p' .. place .. ':' .. claimedAt .. ':' .. failures .. ':' .. (now + ttl)
redis.call('SET', KEYS[1], joined(first, live, line), 'PX', lifetime(ttl, live, line, now))
wake(ARGV[5], ARGV[6], line)
if mine then return 1 end
return 2`;
// 'processed' alone was written by 1.x under a body digest key: the same body, so processed.
// One script, so that reading the latest digest and taking the claim is atomic across processes.
// The retry due this delivery can be: one of its body whose wait after its last failure is over
// (minRetryDelayMs times 1, 5 or 15, reference 6.3; a copy that comes sooner is a newer event
// with the same body); one not superseded first, then the earliest in the subject's order. A
// processed state past its time counts as released; a claim past its time is a retry due of its
// body (expiredClaim).
// Whether a copy can be a retry, and a new event's place, are judged by when it arrived: now
// less the time since it reached the receiver (ARGV[6]: its wait for the key, for its subject's
// line, or a dead letter's age). A new event received before the processed one is 'superseded'.
// While the subject is held, or deliveries wait before this one in its line, the answer is
// 'processing', and a waiter (ARGV[8], '' for none) keeps or takes a place in the line until
// ARGV[9] ms from now, with its digest and arrival (should the place lapse unanswered, see
// settleLapsed). Otherwise it leaves the line (it was first, if it was in it).
// The first in line that leaves it without the subject (a duplicate or a superseded retry) wakes
// the next.
// A claim acknowledged early (ARGV[12] = '1') is marked `|e`: no retry is due should it expire.
// Claimed: 'claimed', or 'claimed:<place>' when the event's place is not the arrival.
// ARGV: digest, token, claimTtlMs, now, minRetryDelayMs, waited ms, retry-due window, waiter id,
// waiter's ms left, wake-up channel, subject, acknowledged early.
const CLAIM = `${SPLIT}
settleLapsed(tonumber(ARGV[4]), tonumber(ARGV[5]))
local v = redis.call('GET', KEYS[1])
local state, rest, header = '', '', ''
local now = tonumber(ARGV[4])
local minDelay = tonumber(ARGV[5])
local received = now - tonumber(ARGV[6])
local me = ARGV[8]
local pdigest, pline, psince, pat, pfailures, prepeated = nil, nil, 0, nil, 0, nil
local expired = nil
if v then state, rest = split(v) end
local line = waiting(rest, now)
local function wait()
  if me ~= '' then join(v, line, me, tonumber(ARGV[9]), now, ARGV[1], received, received + tonumber(ARGV[7])) end
  return 'processing'
end
-- A late call of a delivery that gave its place back: it is gone, and changes nothing.
if me ~= '' and hasLeft(line, me) then return 'processing' end
if v then
  header = state
  if string.sub(state, 1, 11) == 'processing:' then
    local _, _, _, expires = claimFields(state)
    if expires > now then return wait() end
    expired, state = state, 'released'
  elseif state == 'processed' then
    return 'processed'
  elseif string.sub(state, 1, 10) == 'processed:' then
    local expires
    pline, psince, pat, pfailures, expires, prepeated = processedLine(rest)
    pdigest = string.sub(state, 11)
    if pline then
      header = state .. NL .. pline
      if prepeated then header = header .. ':' .. prepeated end
    end
    if expires <= now then state, pdigest, psince, pat, prepeated = 'released', nil, 0, nil, nil end
  elseif state ~= 'released' then
    return 'foreign:' .. string.sub(v, 1, 40)
  end
end
local first = firstPlace(line)
if first and first[2] ~= me then return wait() end
local after = {}
for _, w in ipairs(line) do if w ~= first then table.insert(after, w) end end
local live = retries(rest, now)
if expired then expiredClaim(expired, live, now, tonumber(ARGV[7])) end
local due = retryDueOf(live, ARGV[1], received, minDelay)
local others = {}
for _, r in ipairs(live) do if r ~= due then table.insert(others, r) end end
local repeated = false
local function keepOthers()
  if not due and not first and not expired and not repeated then return end
  if state == 'released' then
    if #others == 0 and #after == 0 then redis.call('DEL', KEYS[1])
    else redis.call('SET', KEYS[1], joined('released', others, after), 'PX', lastExpiry(others, after) - now) end
  else
    local ttl = redis.call('PTTL', KEYS[1])
    if ttl > 0 then redis.call('SET', KEYS[1], joined(header, others, after), 'PX', ttl)
    else redis.call('SET', KEYS[1], joined(header, others, after), 'KEEPTTL') end
  end
end
-- The latest processed body: a retry of it, unless it is the retry of a newer event with the
-- same body, or a copy sooner than the processed attempt's retry could come while newer events
-- wait for theirs. Without them, such a copy's arrival is kept (repeated at): an event received
-- before it that claims after it is older than that state.
if pdigest == ARGV[1] then
  local newer = false
  if due then newer = due[1] == 'a' and due[4] > psince
  elseif pat and minDelay > 0 and (pfailures + 1 >= ${DELIVERY_ATTEMPTS} or received - pat < minDelay * WAITS[pfailures + 1]) then
    -- (A copy of the processed body answered 409, 'r', is that state again: not newer.)
    for _, r in ipairs(live) do if (r[1] == 'a' or (r[1] == 'r' and r[6] ~= pdigest)) and r[4] > psince then newer = true end end
    if not newer and received > latestArrival(psince, pat, prepeated) then
      repeated = true
      header = state .. NL .. pline .. ':' .. received
    end
  end
  if not newer then
    keepOthers()
    if first then wake(ARGV[10], ARGV[11], after) end
    return 'processed'
  end
end
-- A retry overtaken by a newer event, or a new event received before the processed one that
-- claims after it (it waited for a key fetch, or its claim ran late): not dispatched.
if (due and due[1] == 's') or (not due and pdigest and received < latestArrival(psince, pat, prepeated)) then
  keepOthers()
  if first then wake(ARGV[10], ARGV[11], after) end
  return 'superseded'
end
-- A new event is placed where it arrived; the retry due keeps its event's place.
local failures, since, dueUntil = 0, 0, 0
if due then failures, since, dueUntil = due[2], due[4], due[3]
else
  -- Should it fail or expire, its retries can come until then.
  dueUntil = received + tonumber(ARGV[7])
  if pdigest then since = freePlace(received, psince, live)
  else since = freePlace(received, nil, live) end
end
local claimTtl = tonumber(ARGV[3])
local first = 'processing:' .. ARGV[2] .. '|' .. failures .. '|' .. since .. '|' .. dueUntil .. '|' .. (now + claimTtl) .. '|' .. received
if ARGV[12] == '1' then first = first .. '|e' end
redis.call('SET', KEYS[1], joined(first, others, after), 'PX', lifetime(claimTtl + tonumber(ARGV[7]), others, after, now))
-- The event's place, when it is not the arrival (a retry due's, or one moved past a tie).
if since ~= received then return 'claimed:' .. since end
return 'claimed'`;

// A delivery answered 409 without a claim: keep its retry due (see expectSubjectRetry). The
// retry due it can be counts one more failure, in its place; otherwise it is another event,
// placed where it arrived, unless it is a copy of the state's event. An expired claim is a retry
// due first (expiredClaim).
// The service saw the attempt fail ARGV[6] ms ago (0: the 409 answered now; earlier: a 401 or
// 503 answered before its body could be verified, see refused-deliveries.ts).
// ARGV[7]: the id of the delivery's place in line (see DedupeStore.expectRetry's waiterId), '' or
// none (a process of the previous version) to find it by body and arrival; ARGV[8] with it: the
// reply window.
// ARGV: digest, now, minRetryDelayMs, retry-due window, waited ms, failed ms ago, waiter id, reply window.
const EXPECT_RETRY = `${SPLIT}
local now = tonumber(ARGV[2])
local minDelay = tonumber(ARGV[3])
settleLapsed(now, minDelay)
local v = redis.call('GET', KEYS[1])
local state, rest, header = 'released', '', 'released'
local expired = nil
if v then
  state, rest = split(v)
  header = state
  if string.sub(state, 1, 11) == 'processing:' then
    local _, _, _, expires = claimFields(state)
    if expires <= now then expired = state end
  elseif state == 'processed' then
    return 0
  elseif string.sub(state, 1, 10) == 'processed:' then
    local line, _, _, _, _, repeated = processedLine(rest)
    if line then
      header = state .. NL .. line
      if repeated then header = header .. ':' .. repeated end
    end
  elseif state ~= 'released' then
    return 0
  end
end
local view = stateView(state, rest, now)
if not view.live then header = 'released' end
local received = now - tonumber(ARGV[5])
local failed = now - tonumber(ARGV[6])
-- A failure told late: its retry may have come already (see expectSubjectRetry).
if failed < now and now - failed >= minDelay then return 0 end
local line = waiting(rest, now)
local marked = false
local own = ARGV[7] ~= nil and ARGV[7] ~= ''
if own then
  -- Its own place, by its id (a copy's place with the same body and arrival is left alone): if
  -- it lapsed and its failure was recorded then, nothing to add; else it, or the mark it left
  -- giving it back, is answered with its delivery.
  for i, w in ipairs(line) do
    if w[2] == ARGV[7] then
      if w[3] == 'l' and w[7] then return 0 end
      if not w[7] then
        local due = now + tonumber(ARGV[4])
        w = { w[1], w[2], w[3], '|' .. received .. '|' .. due .. '|' .. ARGV[1], received, due, ARGV[1] }
      end
      -- Kept until every copy's place has lapsed (a receiver waits at most the reply window,
      -- ARGV[8], and its places live up to 1 s longer), not for the whole retry-due window.
      line[i], marked = { math.max(w[1], now + tonumber(ARGV[8]) + 1000 + ${SAME_ARRIVAL_MS}), w[2], 'l', w[4], w[5], w[6], w[7] }, true
    end
  end
else
  -- Its place lapsed and its failure was recorded then: this 409, told after, adds nothing.
  for _, w in ipairs(line) do if w[3] == 'l' and placeOf(w, ARGV[1], received) then return 0 end end
  -- Its place, if it still has one, is answered: it will not become a retry due when it lapses.
  for i, w in ipairs(line) do
    if w[3] == 'w' and placeOf(w, ARGV[1], received) then line[i], marked = answered(w), true end
  end
end
local list = retries(rest, now)
if expired then expiredClaim(expired, list, now, tonumber(ARGV[4])) end
local next = failedAttempt(list, view, ARGV[1], received, failed, now + tonumber(ARGV[4]), minDelay, own)
-- Nothing to add: written all the same if its place was answered, or a claim that expired is
-- now a retry due (as the memory store keeps it).
if not next then
  if not marked and not expired then return 0 end
  next = list
end
if not view.live then
  if #next == 0 and #line == 0 then return redis.call('DEL', KEYS[1]) end
  redis.call('SET', KEYS[1], joined('released', next, line), 'PX', lastExpiry(next, line) - now)
  return 1
end
local ttl = redis.call('PTTL', KEYS[1])
local left = lastExpiry(next, line) - now
if ttl > left then left = ttl end
redis.call('SET', KEYS[1], joined(header, next, line), 'PX', left)
return 1`;

// Extends a live claim of this token to claimTtlMs from now (see renewSubjectClaim); the key
// lives at least that and the retry-due window more, as after the claim.
// ARGV: claim prefix (processing:<token>|), now, claimTtlMs, retry-due window.
const RENEW_CLAIM = `${SPLIT}
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, #ARGV[1]) ~= ARGV[1] then return 0 end
local state, rest = split(v)
local failures, since, dueUntil, expires, claimedAt = claimFields(state)
local now = tonumber(ARGV[2])
if expires <= now then return 0 end
local expiry = now + tonumber(ARGV[3])
if expiry < expires then expiry = expires end
local renewed = ARGV[1] .. failures .. '|' .. since .. '|' .. dueUntil .. '|' .. expiry .. '|' .. (claimedAt or '')
if string.sub(state, -2) == '|e' then renewed = renewed .. '|e' end
if rest ~= '' then renewed = renewed .. NL .. rest end
local ttl = redis.call('PTTL', KEYS[1])
local least = expiry - now + tonumber(ARGV[4])
if ttl < least then ttl = least end
redis.call('SET', KEYS[1], renewed, 'PX', ttl)
return 1`;

// A delivery joins the subject's line without claiming (see joinSubjectLine), with the digest
// of its body and its arrival when the receiver tells them (ARGV[6], '' when it does not: its
// place lapses as it is); a value this store did not write is left alone (the claim that follows
// reports it).
// ARGV: waiter id, waiter's ms left, now, minRetryDelayMs, retry-due window, digest, waited ms.
const JOIN_LINE = `${SPLIT}
local now = tonumber(ARGV[3])
settleLapsed(now, tonumber(ARGV[4]))
local v, state, rest = readLine()
if not state then return 0 end
local digest, arrived = nil, nil
if ARGV[6] ~= '' then digest, arrived = ARGV[6], now - tonumber(ARGV[7]) end
join(v, waiting(rest, now), ARGV[1], tonumber(ARGV[2]), now, digest, arrived, (arrived or 0) + tonumber(ARGV[5]))
return 1`;

// A delivery that stopped waiting without a claim answer (the store failed) gives its place
// back, and leaves a mark until the place would have lapsed, so that a late call of it takes no
// place again (see leaveSubjectLine); if it was first, the next may claim now.
// ARGV: waiter id, waiter's ms left, now, wake-up channel, subject, minRetryDelayMs.
const LEAVE_LINE = `${SPLIT}
local now = tonumber(ARGV[3])
settleLapsed(now, tonumber(ARGV[6]))
local v, state, rest = readLine()
if not state then return 0 end
local line = waiting(rest, now)
local found = nil
for _, w in ipairs(line) do if w[2] == ARGV[1] then found = w end end
if found and found[3] == 'l' then return 0 end
local wasFirst = found ~= nil and firstPlace(line) == found
-- (A place given back is no retry due: it keeps no delivery.)
if found then found[3], found[4], found[5], found[6], found[7] = 'l', '', nil, nil, nil
else table.insert(line, { now + tonumber(ARGV[2]), ARGV[1], 'l', '' }) end
local kept = { state }
for l in string.gmatch(rest, '[^' .. NL .. ']+') do
  local c = string.sub(l, 1, 1)
  if c ~= 'w' and c ~= 'l' then table.insert(kept, l) end
end
for _, w in ipairs(line) do table.insert(kept, w[3] .. w[1] .. '|' .. w[2] .. w[4]) end
local ttl = -1
if v then ttl = redis.call('PTTL', KEYS[1]) end
local left = lastExpiry({}, line) - now
if ttl < left then ttl = left end
redis.call('SET', KEYS[1], table.concat(kept, NL), 'PX', ttl)
if wasFirst then wake(ARGV[4], ARGV[5], line) end
return 1`;

// Every option: any other name is refused (see assertOptionNames).
const OPTION_NAMES = optionNames<RedisDedupeStoreOptions>({ client: true, keyPrefix: true, ttlMs: true, claimTtlMs: true, minRetryDelayMs: true, replyWindowMs: true, now: true, commandTimeoutMs: true, subscriber: true });

/**
 * A deduplication store in Redis, shared by every receiver process that uses the same Redis,
 * with the rules of the memory store (see {@link DedupeStore}): one Lua script per operation on
 * the subject's key, so exactly one process wins a claim; a failed handler releases it (keeping
 * the body's retry due); success marks the subject's latest processed body for `ttlMs`. When Redis does not answer within `commandTimeoutMs`, the receiver replies 503
 * and the service retries (fail closed: nothing is dropped).
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * const dedupe = createRedisDedupeStore({ client: new Redis(process.env.REDIS_URL!) });
 * const receiver = createWebhookReceiver({ publicKey, dedupe });
 * ```
 */
export function createRedisDedupeStore(options: RedisDedupeStoreOptions): DedupeStore {
  const send = toRedisCommand(options?.client,
    (message) => new DedupeStoreError('unsupported_redis_client', message), 'createRedisDedupeStore');
  assertOptionNames('createRedisDedupeStore', options, OPTION_NAMES);
  const keyPrefix = options.keyPrefix ?? 'capi:webhook:';
  if (typeof keyPrefix !== 'string') {
    throw new WebhookReceiverError('invalid_options', `keyPrefix must be a string such as 'shop-eu:webhooks:', got ${typeof keyPrefix}.`);
  }
  const ttl = String(positiveIntegerOption('ttlMs', options.ttlMs, DEFAULT_DEDUPE_TTL_MS));

  const minRetryDelayMs = minRetryDelayOption(options.minRetryDelayMs);
  const minRetryDelay = String(minRetryDelayMs);
  const replyWindowMs = replyWindowOption(options.replyWindowMs);
  const claimTtl = String(positiveIntegerOption('claimTtlMs', options.claimTtlMs, DEFAULT_CLAIM_TTL_MS));
  const dueWindow = String(retryDueWindow(minRetryDelayMs, replyWindowMs));
  const replyWindow = String(replyWindowMs);
  if (options.now !== undefined && typeof options.now !== 'function') {
    throw new WebhookReceiverError('invalid_options', 'now must be a function returning milliseconds, like Date.now.');
  }
  const now = options.now ?? Date.now;
  // Whole ms: the scripts read the times in the value as digits.
  const clock = () => String(Math.floor(now()));
  const commandTimeoutMs = positiveIntegerOption('commandTimeoutMs', options.commandTimeoutMs, 2_000);
  if (options.subscriber !== undefined && options.subscriber === (options.client as unknown)) {
    throw new WebhookReceiverError('invalid_options',
      'subscriber must be a second connection (ioredis: redis.duplicate(); node-redis: await client.duplicate().connect()), not the client: a connection that subscribes can send no other command.');
  }
  const subscribe = options.subscriber === undefined ? undefined : toRedisSubscribe(options.subscriber,
    (message) => new DedupeStoreError('unsupported_redis_client', message));
  // The wake-up channel, '' without a subscriber (the scripts then publish nothing).
  const channel = subscribe === undefined ? '' : `${keyPrefix}lines`;

  const command = withCommandTimeout(send, commandTimeoutMs,
    (message, cause) => new DedupeStoreError('dedupe_store_unavailable', message, cause === undefined ? undefined : { cause }));

  const releaseClaim = async (key: string, token: string, options?: ReleaseOptions): Promise<void> => {
    await command(['EVAL', RELEASE_IF_OWNED, '1', keyPrefix + key, `${CLAIM_PREFIX}${token}|`, digestOfToken(token),
      options?.retryExpected === true ? '1' : '0', clock(), dueWindow, String(DELIVERY_ATTEMPTS), channel, key, replyWindow, String(sentMsAgoOf(options) ?? ''), minRetryDelay]);
  };

  const store: DedupeStore = {
    replyWindowMs,
    minRetryDelayMs,
    async claim(key: string, digest: string = key, waitedMs = 0, waiter?: SubjectWaiter, options?: ClaimOptions): Promise<DedupeClaim> {
      const token = `${crypto.randomUUID()}:${digest}`;
      const [id, leftMs] = waiter === undefined ? ['', '0'] : waiterArguments(waiter);
      let reply: unknown;
      try {
        reply = await command(['EVAL', CLAIM, '1', keyPrefix + key, digest, token, claimTtl, clock(), minRetryDelay, String(Math.floor(waitedMs)), dueWindow, id, leftMs, channel, key, options?.acknowledgedEarly === true ? '1' : '0']);
      } catch (error) {
        // The script may still be queued in the client and run once Redis is back. A release
        // queued behind it on the same connection undoes it, so that the retry is not
        // answered "in progress" for claimTtlMs.
        // The 503 is retried: a retry due that the late claim took stays due.
        releaseClaim(key, token, { retryExpected: true }).catch(() => undefined);
        throw error;
      }
      const text = String(reply);
      if (text === 'claimed') return { state: 'claimed', token };
      if (text.startsWith('claimed:')) return { state: 'claimed', token, place: Number(text.slice(8)) };
      if (text === 'processed' || text === 'processing' || text === 'superseded') return { state: text };
      throw new DedupeStoreError('unexpected_store_reply',
        `Redis key ${keyPrefix + key} holds "${text.replace(/^foreign:/, '')}", which this store did not write; use a keyPrefix of its own.`);
    },
    async markProcessed(key: string, token: string, options?: MarkProcessedOptions): Promise<boolean> {
      return Number(await command(['EVAL', MARK_PROCESSED_IF_NOT_TAKEN, '1', keyPrefix + key, `${CLAIM_PREFIX}${token}|`,
        PROCESSED + digestOfToken(token), ttl, clock(), channel, key, dueWindow, options?.retryExpected === true ? '1' : '0', replyWindow, String(sentMsAgoOf(options) ?? ''), minRetryDelay])) === 1;
    },
    release: releaseClaim,
    async expectRetry(key: string, digest: string, waitedMs = 0, failedMsAgo = 0, waiterId?: string): Promise<void> {
      const own = waiterId === undefined ? [] : [waiterArguments({ id: waiterId, leftMs: 1 })[0], replyWindow];
      await command(['EVAL', EXPECT_RETRY, '1', keyPrefix + key, digest, clock(), minRetryDelay, dueWindow, String(Math.floor(waitedMs)), String(Math.floor(failedAgo(waitedMs, failedMsAgo))), ...own]);
    },
    async joinLine(key: string, waiter: SubjectWaiter): Promise<void> {
      const [digest, waited] = waiter.digest === undefined ? ['', '0'] : [waiter.digest, String(Math.floor(waiter.waitedMs ?? 0))];
      await command(['EVAL', JOIN_LINE, '1', keyPrefix + key, ...waiterArguments(waiter), clock(), minRetryDelay, dueWindow, digest, waited]);
    },
    async leaveLine(key: string, waiter: SubjectWaiter): Promise<void> {
      await command(['EVAL', LEAVE_LINE, '1', keyPrefix + key, ...waiterArguments(waiter), clock(), channel, key, minRetryDelay]);
    },
    claimTtlMs: Number(claimTtl),
    async renewClaim(key: string, token: string): Promise<boolean> {
      return Number(await command(['EVAL', RENEW_CLAIM, '1', keyPrefix + key, `${CLAIM_PREFIX}${token}|`, clock(), claimTtl, dueWindow])) === 1;
    },
  };
  if (subscribe !== undefined) {
    store.watchLines = watchLinesOver((onMessage) => subscribe(channel, onMessage), (error, retryMs) => new DedupeStoreError('wake_ups_unavailable',
      `The subscriber did not subscribe to ${channel} (${error instanceof Error ? error.message : String(error)}); trying again in ${retryMs / 1000} s. Meanwhile deliveries waiting for a subject held in another process claim it at their next try (up to 250 ms) instead of at once. Pass a connected second connection as subscriber, whose Redis user may subscribe to ${channel}.`, { cause: error }));
  }
  return store;
}

/** A waiter's id and ms left as script arguments; an id the value's lines could not hold is refused. */
function waiterArguments(waiter: SubjectWaiter): [string, string] {
  if (typeof waiter.id !== 'string' || !/^[\w-]{1,200}$/.test(waiter.id)) {
    throw new DedupeStoreError('invalid_waiter', `A waiter's id must be 1 to 200 letters, digits, '-' or '_', got ${JSON.stringify(String(waiter.id).slice(0, 40))}.`);
  }
  checkWaiter(waiter);
  return [waiter.id, String(Math.max(1, Math.ceil(waiter.leftMs)))];
}

/** Tokens are `<uuid>:<digest>`. */
function digestOfToken(token: string): string {
  return token.slice(token.indexOf(':') + 1);
}
