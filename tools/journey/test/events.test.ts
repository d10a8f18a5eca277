// Reference 6 (events, delivery, signature, retries) and 3.2, over a user's life: what the
// partner's real receiver sees always equals what the API answers, also when a user returns to
// an earlier state, when the partner's handler fails, when a delivery repeats, and when
// someone else posts to the receiver.
import { generateKeyPairSync, sign } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getOnboardingStatus, requestPhoneVerification, setPhone } from '@capi/client/onboarding';
import { createMemoryDeadLetterStore } from '@capi/webhook-receiver';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { admin, apiUser, changeKyc, expectEachEventOnceWhenSentTwice, expectHeldChangesInOrder, expectLateRetrySuperseded, expectNewEvents, expectOutageRetriesInOrder, expectRepeatedDeliveryDuplicate, lastOneTimePassword, onboardedUser, startJourney, type Journey } from './support/journey.js';

let journey: Journey;
beforeAll(async () => {
  journey = await startJourney({});
});
afterAll(() => journey.close());

const setKyc = (userId: string, kycStatus: string) => admin(journey.sandbox, 'PUT', `/__sandbox/users/${userId}/kyc-status`, { kycStatus });

describe('a user who returns to an earlier state is seen in every state (reference 3.2: every change of kycStatus is an event)', () => {
  it('approved -> resubmissionRequested -> approved, twice: an event for each change, the repeats included, each the User the API answers then', async () => {
    const { client, user } = await onboardedUser(journey, 'return@example.com');
    const seen = { count: journey.received.length };
    expect(user.kycStatus).toBe('approved');
    expect(await getOnboardingStatus(client)).toEqual({ status: 'completed' });

    await setKyc(user.id, 'resubmissionRequested');
    await expectNewEvents(journey, seen, client, ['kyc.status.changed']);
    expect((await apiUser(client)).kycStatus).toBe('resubmissionRequested');
    expect(await getOnboardingStatus(client)).toEqual({ status: 'action_complete_kyc' });

    await setKyc(user.id, 'approved');
    await expectNewEvents(journey, seen, client, ['kyc.status.changed']);
    expect(await getOnboardingStatus(client)).toEqual({ status: 'completed' });

    // Once more: now each event's body repeats an earlier one exactly, and is still dispatched.
    await setKyc(user.id, 'resubmissionRequested');
    await expectNewEvents(journey, seen, client, ['kyc.status.changed']);
    await setKyc(user.id, 'approved');
    await expectNewEvents(journey, seen, client, ['kyc.status.changed']);
    const kycEvents = journey.received.filter((event) => event.eventType === 'kyc.status.changed' && event.data.id === user.id).slice(-4);
    expect(kycEvents.map((event) => event.data.kycStatus)).toEqual(['resubmissionRequested', 'approved', 'resubmissionRequested', 'approved']);
    expect(kycEvents[2]!.data).toEqual(kycEvents[0]!.data);
    expect(kycEvents[3]!.data).toEqual(kycEvents[1]!.data);
  });

  it('phone validated -> not validated -> validated again: an event for each validation change, none for the same value', async () => {
    const { client, user } = await onboardedUser(journey, 'phone-return@example.com');
    const seen = { count: journey.received.length };
    const setValidation = (isPhoneValidated: boolean) => admin(journey.sandbox, 'PUT', `/__sandbox/users/${user.id}/phone-validation`, { isPhoneValidated });
    await setValidation(true);
    await expectNewEvents(journey, seen, client, ['kyc.phone-validation.changed']);
    await setValidation(true);
    await expectNewEvents(journey, seen, client, []);
    await setValidation(false);
    await expectNewEvents(journey, seen, client, ['kyc.phone-validation.changed']);
    await setValidation(true);
    await expectNewEvents(journey, seen, client, ['kyc.phone-validation.changed']);
    expect(await apiUser(client)).toMatchObject({ isPhoneValidated: true, phone: '+15555550100' });
  });
});

describe('a phone set with the first card and validated later (reference 9: the partner does not require verification)', () => {
  it('the card sets the number without an event; its validation later is one kyc.phone-validation.changed', async () => {
    const { client, user } = await onboardedUser(journey, 'phone-later@example.com');
    const seen = { count: journey.received.length };
    expect(user).toMatchObject({ phone: '+15555550100', isPhoneValidated: false });
    await requestPhoneVerification(client, { phone: '+15555550100' });
    const validated = await setPhone(client, { phone: '+15555550100', otp: await lastOneTimePassword(journey.sandbox, '+15555550100') });
    expect(validated).toMatchObject({ phone: '+15555550100', isPhoneValidated: true });
    await expectNewEvents(journey, seen, client, ['kyc.phone-validation.changed']);
  });
});

describe('a slow partner handler does not reorder changes made in quick succession (reference 3.2: every change is an event)', () => {
  it('resubmissionRequested, pending, approved while the handlers are held: each waits its turn, they are handled in that order, first time, and the receiver ends on the API\'s approved', async () => {
    await expectHeldChangesInOrder(journey, 'slow-handler@example.com');
  });
});

describe("a failing partner handler loses no event (reference 6.3: retried after a non-2xx answer)", () => {
  it('the first attempt is answered 500, the retry is processed once, and it carries the User the API answers', async () => {
    const { client, user } = await onboardedUser(journey, 'retry@example.com');
    const seen = { count: journey.received.length };
    journey.failNextHandler('kyc.status.changed');
    await setKyc(user.id, 'requiresAction');
    await expectNewEvents(journey, seen, client, ['kyc.status.changed']);
    const delivery = journey.sandbox.deliveries().findLast((entry) => entry.eventType === 'kyc.status.changed')!;
    expect(delivery.state).toBe('succeeded');
    expect(delivery.attempts.map((attempt) => attempt.status)).toEqual([500, 200]);
    // The partner's onError heard of the failure once, and of nothing else.
    expect(journey.reported).toEqual([{ message: "the partner's kyc.status.changed handler failed", outcome: 'handler_failed' }]);
    // The retry waits the first of 1, 5, 15 minutes (divided by the journey's time scale).
    expect(delivery.attempts[1]!.unscaledDelayMs).toBe(60_000);
  });
});

describe('a late retry does not bring back an older state (reference 6.3: a retry comes minutes after the attempt it repeats)', () => {
  // A journey of its own whose first retry comes 3 s after the failure (60 s / 20), so that a
  // change sent right after a failed attempt is surely delivered before that retry.
  let late: Journey;
  beforeAll(async () => {
    late = await startJourney({ timeScale: 20 });
  });
  afterAll(() => late.close());

  it('pending fails, approved is processed, then the retry of pending comes: answered superseded, never handled, and the receiver stays on the API\'s approved', async () => {
    const reported = late.reported.length;
    await expectLateRetrySuperseded(late, 'late-retry@example.com');
    expect(late.reported.slice(reported)).toEqual([{ message: "the partner's kyc.status.changed handler failed", outcome: 'handler_failed' }]);
  });

  it('pending and approved both fail (the partner\'s database is down): both retries are handled, in order, and the receiver ends on the API\'s approved', async () => {
    await expectOutageRetriesInOrder(late, 'outage@example.com');
  });

  it('a late retry of another event type carries the KYC status from before: taken field by field, as the READMEs say, the partner still ends on the API\'s user', async () => {
    const { client, user } = await onboardedUser(late, 'cross-type@example.com');
    const from = late.received.length;
    const before = late.sandbox.deliveries().length;
    late.failNextHandler('kyc.source-of-funds.changed');
    await admin(late.sandbox, 'PUT', `/__sandbox/users/${user.id}/source-of-funds`, { isSourceOfFundsAnswered: false });
    await vi.waitFor(() => expect(late.sandbox.deliveries()[before]?.attempts[0]?.status).toBe(500));
    await changeKyc(late, user.id, 'rejected');
    await late.sandbox.whenDeliveriesSettled();
    const events = late.received.slice(from).filter((event) => event.data.id === user.id);
    // The KYC change was handled first; the source-of-funds retry after it carries the status from before.
    expect(events.map((event) => [event.eventType, event.data.kycStatus, event.data.isSourceOfFundsAnswered])).toEqual([
      ['kyc.status.changed', 'rejected', false],
      ['kyc.source-of-funds.changed', 'approved', false],
    ]);
    // A partner row kept field by field (each event type its own field) agrees with the API; a
    // copy of the last snapshot would say approved.
    const row: Record<string, unknown> = {};
    const fieldOf: Record<string, 'kycStatus' | 'isSourceOfFundsAnswered' | 'isPhoneValidated'> = { 'kyc.status.changed': 'kycStatus', 'kyc.source-of-funds.changed': 'isSourceOfFundsAnswered', 'kyc.phone-validation.changed': 'isPhoneValidated' };
    for (const event of events) {
      const field = fieldOf[event.eventType]!;
      row[field] = event.data[field];
    }
    const api = await apiUser(client);
    expect(row).toEqual({ kycStatus: api.kycStatus, isSourceOfFundsAnswered: api.isSourceOfFundsAnswered });
    expect(api.kycStatus).toBe('rejected');
  });
});

describe('a partner that acknowledges early loses no event (acknowledgeEarly: the service does not retry after a 202), given a dead-letter store', () => {
  let early: Journey;
  let deadLetters: ReturnType<typeof createMemoryDeadLetterStore>;
  beforeAll(async () => {
    deadLetters = createMemoryDeadLetterStore();
    early = await startJourney({}, undefined, { acknowledgeEarly: true, deadLetters });
  });
  afterAll(() => early.close());
  const setEarlyKyc = (userId: string, kycStatus: string) => admin(early.sandbox, 'PUT', `/__sandbox/users/${userId}/kyc-status`, { kycStatus });
  // The handlers run after the 202: a settled delivery's handler may still be running. Idle once
  // every delivery (each acknowledged at its first attempt) was handled or failed.
  // (Replayed events reach the handlers without a delivery.)
  let replayed = 0;
  const idle = () => vi.waitFor(() => expect(early.received.length - replayed + early.reported.filter((report) => report.outcome === 'handler_failed').length).toBe(early.sandbox.deliveries().length));
  const replay = async () => {
    const { results } = await early.replay();
    replayed += results.filter((result) => result.outcome === 'processed').length;
    return results;
  };

  it('the handler fails after the 202: the service stops, the event is kept, and replay() once the database is back ends on the API\'s state', async () => {
    const { client, user } = await onboardedUser(early, 'early@example.com');
    await idle();
    const from = early.received.length;
    const before = early.sandbox.deliveries().length;
    early.failNextHandler('kyc.status.changed');
    await setEarlyKyc(user.id, 'requiresAction');
    await early.sandbox.whenDeliveriesSettled();
    await idle();
    await vi.waitFor(async () => expect(await deadLetters.list(10)).toHaveLength(1));
    // One attempt, acknowledged: the service will not send it again.
    expect(early.sandbox.deliveries().slice(before).map((delivery) => delivery.attempts.map((attempt) => attempt.status))).toEqual([[202]]);
    expect(early.received.slice(from)).toEqual([]);
    expect(early.reported.at(-1)).toEqual({ message: "the partner's kyc.status.changed handler failed", outcome: 'handler_failed' });
    expect((await deadLetters.list(10))[0]).toMatchObject({ reason: 'handler_failed', errors: [] });

    expect((await replay()).map((result) => [result.outcome, result.deleted])).toEqual([['processed', true]]);
    expect(early.received.slice(from).map((event) => event.data)).toEqual([await apiUser(client)]);
    expect((await apiUser(client)).kycStatus).toBe('requiresAction');
  });

  it('a change the platform made after the failed one, handled before the replay, supersedes it: the partner stays on the API\'s state', async () => {
    const { client, user } = await onboardedUser(early, 'early-newer@example.com');
    await idle();
    const from = early.received.length;
    early.failNextHandler('kyc.status.changed');
    await setEarlyKyc(user.id, 'pending');
    await vi.waitFor(async () => expect(await deadLetters.list(10)).toHaveLength(1));
    await setEarlyKyc(user.id, 'approved');
    await early.sandbox.whenDeliveriesSettled();
    await idle();
    await vi.waitFor(() => expect(early.received.slice(from).map((event) => event.data.kycStatus)).toEqual(['approved']));
    expect((await replay()).map((result) => result.outcome)).toEqual(['superseded']);
    expect(early.received.slice(from).map((event) => event.data)).toEqual([await apiUser(client)]);
    expect(await deadLetters.list(10)).toEqual([]);
  });
});

describe('a repeated delivery is processed once (reference 6.2 rule 6: duplicates are possible)', () => {
  it('the same event sent again is answered 2xx and reaches no handler', async () => {
    await expectRepeatedDeliveryDuplicate(journey, 'twice@example.com');
  });
});

describe('the service sends every event twice (reference 6.2: duplicates are possible; the sandbox\'s duplicateRate 1)', () => {
  // duplicateAfterMs 0: the copy reaches the receiver while the first is being handled; 40: once it was answered.
  it.each([0, 40])('copies %i ms apart: each event of a user\'s life is handled once, in order, the User the API answers, and returning to an earlier state is still seen', async (duplicateAfterMs) => {
    const twice = await startJourney({ duplicateRate: 1, duplicateAfterMs });
    try {
      await expectEachEventOnceWhenSentTwice(twice, `twice-${duplicateAfterMs}@example.com`);
    } finally {
      await twice.close();
    }
  });
});

/** Sends one event to a listener of its own and returns the raw body and signature headers the platform sent. */
async function catchDelivery(send: (to: string) => unknown): Promise<{ body: string; headers: Record<string, string> }> {
  let caught: { body: string; headers: Record<string, string> } | undefined;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      caught = {
        body: Buffer.concat(chunks).toString('utf8'),
        headers: { 'x-webhook-timestamp': String(request.headers['x-webhook-timestamp']), 'x-webhook-signature': String(request.headers['x-webhook-signature']) },
      };
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    send(`http://127.0.0.1:${(server.address() as AddressInfo).port}/catch`);
    await journey.sandbox.whenDeliveriesSettled();
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  expect(caught).toBeDefined();
  return caught!;
}

describe('only deliveries signed by the platform reach the handlers (reference 6.2 rules 3 to 5)', () => {
  const body = (data: unknown) => JSON.stringify({ eventType: 'kyc.status.changed', data });
  const post = (rawBody: string, headers: Record<string, string>) => fetch(journey.receiverUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: rawBody });

  it('refuses with 401 a forgery signed by another key, a signed body changed in transit, and a delivery without headers', async () => {
    const { client, user } = await onboardedUser(journey, 'forged@example.com');
    const seen = { count: journey.received.length };
    const forged = body({ ...user, kycStatus: 'rejected' });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const { privateKey } = generateKeyPairSync('ed25519');
    const signature = sign(null, Buffer.from(`${timestamp}.${forged}`), privateKey).toString('base64');
    expect((await post(forged, { 'x-webhook-timestamp': timestamp, 'x-webhook-signature': signature })).status).toBe(401);

    // A genuine delivery, caught on its way (here: sent to a second endpoint of ours)...
    await setKyc(user.id, 'pending');
    await expectNewEvents(journey, seen, client, ['kyc.status.changed']);
    const genuine = await catchDelivery((to) => journey.sandbox.sendEvent('kyc.status.changed', journey.sandbox.users.get(user.id), { to: [to] }));
    // ...whose body is changed keeps no valid signature.
    const changed = genuine.body.replace('"pending"', '"approved"');
    expect(changed).not.toBe(genuine.body);
    expect((await post(changed, genuine.headers)).status).toBe(401);
    expect((await post(forged, {})).status).toBe(401);
    // The untouched body with its signature is authentic (and already processed: a duplicate).
    expect((await post(genuine.body, genuine.headers)).status).toBe(200);

    await expectNewEvents(journey, seen, client, []);
    expect((await apiUser(client)).kycStatus).toBe('pending');
    // A wrong key looks the same as a forgery: onError hears of these 401s once (at most once a
    // minute), with what to check.
    expect(journey.reported.filter((entry) => entry.outcome === 'invalid_signature')).toEqual([
      { outcome: 'invalid_signature', message: expect.stringMatching(/^Answered 401 since this receiver started: 1 delivery with a signature that does not verify with the configured public key\. .*check the public key/) },
    ]);
  });
});

describe('a receiver whose key is out of date is told (the service rotates its key; a sandbox makes a new one at each start)', () => {
  let stale: Journey;
  beforeAll(async () => {
    stale = await startJourney({});
  });
  afterAll(() => stale.close());

  it('after a rotation, every attempt of an event is answered 401 and the event is given up, but onError hears of it once, saying to check the key', async () => {
    const { user } = await onboardedUser(stale, 'stale-key@example.com');
    await stale.sandbox.whenDeliveriesSettled();
    const reported = stale.reported.length;
    await stale.sandbox.rotateWebhookKey();
    await admin(stale.sandbox, 'PUT', `/__sandbox/users/${user.id}/kyc-status`, { kycStatus: 'requiresAction' });
    await stale.sandbox.whenDeliveriesSettled();
    const delivery = stale.sandbox.deliveries().findLast((entry) => entry.eventType === 'kyc.status.changed')!;
    expect(delivery.attempts.map((attempt) => attempt.status)).toEqual([401, 401, 401, 401]);
    expect(delivery.state).not.toBe('succeeded');
    expect(stale.received.filter((event) => event.data.id === user.id && event.data.kycStatus === 'requiresAction')).toEqual([]);
    expect(stale.reported.slice(reported)).toEqual([
      { outcome: 'invalid_signature', message: expect.stringMatching(/^Answered 401 since this receiver started: 1 delivery with a signature that does not verify with the configured public key\..*createPublicKeyProvider/) },
    ]);
  });
});

describe('the daily limit has no event (reference 6.1 names none): the API answers are the whole truth', () => {
  it('a set limit is answered pending, read back pending, then synced, and sends nothing to the receiver', async () => {
    const { client } = await onboardedUser(journey, 'limit-events@example.com');
    const seen = { count: journey.received.length };
    const set = await client.setDailyLimit({ amount: 123_400 });
    expect(set).toEqual({ amount: 123_400, currency: 'USD', syncStatus: 'pending' });
    expect(await client.getDailyLimit()).toEqual(set);
    expect(await client.waitForLimitSync({ pollIntervalMs: 20 })).toEqual({ ...set, syncStatus: 'synced' });
    await expectNewEvents(journey, seen, client, []);
  });
});
