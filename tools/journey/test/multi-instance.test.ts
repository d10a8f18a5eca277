// Reference 6 over a user's life when the partner runs its receiver as two instances behind a
// round-robin load balancer, sharing one real Redis: what the handlers see, together, still
// equals what the API answers. Each instance is a receiver of its own, with its own Redis
// connection and its own lines, as separate processes have; consecutive deliveries go to
// alternate instances.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '@capi/bench-kit/redis-server';
import { changeKyc, expectEachEventOnceWhenSentTwice, expectHeldChangesInOrder, expectLateRetrySuperseded, expectNewEvents, expectOutageRetriesInOrder, expectRepeatedDeliveryDuplicate, onboardedUser, startJourney, type Journey } from './support/journey.js';

let redis: RedisServer;
let journey: Journey;
beforeAll(async () => {
  redis = await startRedisServer();
  journey = await startJourney({}, { instances: 2, redisPort: redis.port });
});
afterAll(async () => {
  await journey?.close();
  await redis?.close();
});

describe('two instances sharing Redis: every change is handled once, in order, and the handlers end where the API is', () => {
  it('approved -> resubmissionRequested -> approved, twice, on alternate instances: an event for each change, the repeats included', async () => {
    const { client, user } = await onboardedUser(journey, 'lb-return@example.com');
    const seen = { count: journey.received.length };
    for (const kycStatus of ['resubmissionRequested', 'approved', 'resubmissionRequested', 'approved']) {
      await changeKyc(journey, user.id, kycStatus);
      await expectNewEvents(journey, seen, client, ['kyc.status.changed']);
    }
    const kycEvents = journey.received.filter((event) => event.eventType === 'kyc.status.changed' && event.data.id === user.id).slice(-4);
    expect(kycEvents.map((event) => event.data.kycStatus)).toEqual(['resubmissionRequested', 'approved', 'resubmissionRequested', 'approved']);
  });

  it('resubmissionRequested, pending, approved while the handlers are held, the first and third on one instance and the second on the other: handled in that order, each on its first attempt', async () => {
    // The instance that holds the subject has approved waiting beside it; pending waits in the
    // other instance, and came first.
    await expectHeldChangesInOrder(journey, 'lb-slow@example.com');
  });

  it('the same event sent again reaches the other instance and no handler', async () => {
    await expectRepeatedDeliveryDuplicate(journey, 'lb-twice@example.com');
  });
});

describe('two instances sharing Redis: a failed attempt and its late retry (reference 6.3)', () => {
  // Retries 3 s after a failure (60 s / 20), so that a change sent right after a failed attempt
  // is surely delivered before that retry.
  let late: Journey;
  beforeAll(async () => {
    late = await startJourney({ timeScale: 20 }, { instances: 2, redisPort: redis.port });
  });
  afterAll(() => late?.close());

  it('pending fails on one instance, approved is processed, the retry of pending comes to either: superseded, and the handlers stay on the API\'s approved', async () => {
    await expectLateRetrySuperseded(late, 'lb-late@example.com');
  });

  it('pending and approved both fail (an outage): both retries are handled, once each, in order, on whichever instance they reach', async () => {
    await expectOutageRetriesInOrder(late, 'lb-outage@example.com');
  });
});

describe('two instances sharing Redis: the service sends every event twice (the sandbox\'s duplicateRate 1)', () => {
  let twice: Journey;
  beforeAll(async () => {
    twice = await startJourney({ duplicateRate: 1 }, { instances: 2, redisPort: redis.port });
  });
  afterAll(() => twice?.close());

  it('the copies reach alternate instances (the second waits for the first in the other process): each event is handled once, in order, where the API is', async () => {
    await expectEachEventOnceWhenSentTwice(twice, 'lb-duplicates@example.com');
  });
});
