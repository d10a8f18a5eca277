// Deliveries answered 401 for their signature or timestamp: a forgery, or a receiver whose key
// (another environment's, a rotated one, a sandbox's from before its restart) or clock is
// wrong, which loses every authentic event after its retries. onError hears of them at most
// once a minute, with how many came and what to check; so do headers that are missing or
// malformed (a proxy that drops them; scanners).
import { createServer } from 'node:http';
import { createPublicKeyProvider } from '@capi/webhook-signature';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookReceiver, toNodeHandler, WebhookReceiverError, type WebhookErrorContext } from '../src/index.js';
import { eventBody } from './helpers/events.js';
import { createFakeService, type FakeService } from './helpers/service.js';
import { listen, type RunningServer } from './helpers/servers.js';

let service: FakeService;
let otherService: FakeService;
const running: RunningServer[] = [];
beforeAll(async () => {
  [service, otherService] = await Promise.all([createFakeService(), createFakeService()]);
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

/** A receiver over real HTTP that trusts `service`'s key, on a clock the test moves. */
async function start() {
  let nowMs = Date.parse('2026-11-26T12:00:00Z');
  const reports: Array<{ error: unknown; context: WebhookErrorContext }> = [];
  const dispatched: string[] = [];
  const receiver = createWebhookReceiver({ publicKey: service.publicKey, now: () => nowMs, onError: (error, context) => { reports.push({ error, context }); } })
    .onAny((event) => { dispatched.push((event.data as { id: string }).id); });
  const server = await listen(toNodeHandler(receiver));
  running.push(server);
  const nowSeconds = () => Math.floor(nowMs / 1000);
  return {
    url: server.url,
    reports,
    dispatched,
    advance: (ms: number) => { nowMs += ms; },
    /** Signed by the other key (a receiver given the wrong one sees exactly this). */
    wrongKey: (id: string) => otherService.deliver(server.url, eventBody('user.created', id), { timestamp: nowSeconds() }),
    genuine: (id: string, secondsAgo = 0) => service.deliver(server.url, eventBody('user.created', id), { timestamp: nowSeconds() - secondsAgo }),
  };
}

const messages = (reports: Array<{ error: unknown }>) => reports.map(({ error }) => {
  expect(error).toBeInstanceOf(WebhookReceiverError);
  expect((error as WebhookReceiverError).code).toBe('signatures_rejected');
  return (error as Error).message;
});

describe('401s for a signature, a timestamp or their headers reach onError, at most once a minute', () => {
  it('reports the first at once, counts the next ones of the minute, and reports them with the next after it', async () => {
    const receiver = await start();
    expect((await receiver.wrongKey('u1')).status).toBe(401);
    expect(receiver.reports.map(({ context }) => context)).toEqual([{ outcome: 'invalid_signature', afterReply: false }]);
    expect(messages(receiver.reports)).toEqual([expect.stringMatching(/^Answered 401 since this receiver started: 1 delivery with a signature that does not verify with the configured public key\. Forgeries are refused either way; but if these come from the service, its events are lost after their retries: check the public key .*createPublicKeyProvider\(\{ url \}\).* this server's clock\. Reported at most once a minute\.$/)]);
    expect((receiver.reports[0]!.error as Error).cause).toMatchObject({ name: 'WebhookSignatureError', code: 'invalid_signature' });

    // Within the minute: counted, not reported. A genuine delivery between them is processed.
    for (const id of ['u2', 'u3']) expect((await receiver.wrongKey(id)).status).toBe(401);
    receiver.advance(30_000);
    expect((await receiver.genuine('u4', 400)).body.code).toBe('timestamp_too_old');
    expect((await receiver.genuine('u5')).status).toBe(200);
    expect(receiver.reports).toHaveLength(1);

    receiver.advance(30_000);
    expect((await receiver.wrongKey('u6')).status).toBe(401);
    expect(messages(receiver.reports.slice(1))).toEqual([expect.stringMatching(/^Answered 401 in the last 60 s: 3 deliveries with a signature that does not verify with the configured public key, 1 delivery with a timestamp older than toleranceSeconds\. /)]);
    expect(receiver.dispatched).toEqual(['u5']);
  });

  it('counts deliveries without the signature headers, or with malformed ones: a proxy that drops them loses every event (scanners give them too)', async () => {
    const receiver = await start();
    const post = (headers: Record<string, string>) => fetch(receiver.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: eventBody('user.created', 'u1') });
    // A proxy that strips the X-Webhook-* headers off the service's deliveries.
    expect((await post({})).status).toBe(401);
    expect(receiver.reports.map(({ context }) => context)).toEqual([{ outcome: 'missing_timestamp', afterReply: false }]);
    expect(messages(receiver.reports)).toEqual(['Answered 401 since this receiver started: 1 delivery with no X-Webhook-Timestamp header. Forgeries and scanners are refused either way; but if these come from the service, its events are lost after their retries: ' +
      'check that nothing in front of this receiver (a proxy, a load balancer, a middleware) drops or rewrites the X-Webhook-Timestamp and X-Webhook-Signature headers. Reported at most once a minute.']);
    expect((await post({ 'x-webhook-timestamp': 'yesterday', 'x-webhook-signature': 'abc' })).status).toBe(401);
    expect((await receiver.genuine('u2', -400)).body.code).toBe('timestamp_in_future');
    expect(receiver.reports).toHaveLength(1);
    receiver.advance(60_000);
    expect((await post({})).status).toBe(401);
    expect(messages(receiver.reports.slice(1))).toEqual([expect.stringMatching(/^Answered 401 in the last 60 s: 1 delivery with an X-Webhook-Timestamp that is not Unix seconds, 1 delivery with a timestamp further ahead than toleranceSeconds, 1 delivery with no X-Webhook-Timestamp header\. Forgeries and scanners are refused either way; .*: check this server's clock \(NTP\).*\(the last one: X-Webhook-Timestamp is 400s in the future, beyond the 300s tolerance\); and for the headers, check that nothing in front of this receiver .* Reported at most once a minute\.$/)]);
  });

  it("timestamps alone point at this server's clock, first, with how far off the last one was (not at the key: their signatures were not checked)", async () => {
    const receiver = await start();
    // The receiver's clock runs 6 minutes ahead of the service's: every attempt is 360 s old, retries included.
    for (const id of ['u1', 'u2']) expect((await receiver.genuine(id, 360)).body.code).toBe('timestamp_too_old');
    expect(messages(receiver.reports)).toEqual(['Answered 401 since this receiver started: 1 delivery with a timestamp older than toleranceSeconds. Forgeries are refused either way; but if these come from the service, its events are lost after their retries: ' +
      "check this server's clock (NTP): the service signs each retry with a new timestamp, so while the clock is off every attempt is refused alike (a replayed old delivery gives these too) " +
      '(the last one: X-Webhook-Timestamp is 360s old, beyond the 300s tolerance). Reported at most once a minute.']);
    receiver.advance(60_000);
    expect((await receiver.genuine('u3', 360)).status).toBe(401);
    expect(messages(receiver.reports.slice(1))).toEqual([expect.stringMatching(/^Answered 401 in the last 60 s: 2 deliveries with a timestamp older than toleranceSeconds\. .*check this server's clock \(NTP\).*\(the last one: X-Webhook-Timestamp is 360s old, beyond the 300s tolerance\)\. Reported/)]);
    expect(receiver.dispatched).toEqual([]);
  });

  it('a rotation the receiver could not fetch (the key endpoint failing on the refetch) points at the key endpoint first, in its own words', async () => {
    // The endpoint served the old key, then the service rotated to `service`'s key and the endpoint went down.
    let served: string | undefined = otherService.publicKey;
    const keyServer = await listen(createServer((_req, res) => {
      if (served === undefined) res.writeHead(503, { 'content-type': 'text/plain' }).end('down');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true, publicKey: served }));
    }));
    running.push(keyServer);
    // minRefreshIntervalMs 0: the refetch is not held back by the fetch just made.
    const publicKey = createPublicKeyProvider({ url: `${keyServer.url}/api/v1/public-key`, minRefreshIntervalMs: 0 });
    await publicKey.get();
    served = undefined;
    const reports: Array<{ error: unknown; context: WebhookErrorContext }> = [];
    const receiver = createWebhookReceiver({ publicKey, onError: (error, context) => { reports.push({ error, context }); } });
    const server = await listen(toNodeHandler(receiver));
    running.push(server);

    expect(await service.deliver(server.url, eventBody('user.created', 'rotated'))).toMatchObject({ status: 401, body: { code: 'invalid_signature' } });
    const [message] = messages(reports);
    expect(message).toMatch(/^Answered 401 since this receiver started: 1 delivery with a signature that does not verify with the configured public key\. .*: check the key endpoint first: after a signature did not verify, refetching the public key failed \(the last time: .*503.*\), so a key the service rotated to has not reached this receiver; then check the public key /);
    expect(((reports[0]!.error as Error).cause as Error).cause).toMatchObject({ name: 'PublicKeyFetchError' });
  });
});

