// After a rotation of the webhook key, a receiver whose provider fetched the key moments before
// answers the events signed with the new key 401 (the provider refetches at most once per
// minRefreshIntervalMs) and keeps what it refused, to record the authentic ones as retries due
// once it has the new key. That must happen before the first retry comes: with an interval equal
// to the first retry wait (the old default of one minute, 60_000 / N under a time scale), the
// refused events were shown authentic only when their retries came, too late for the store; the
// retry of the first one was taken for a new event and superseded the retries of the user's later
// events, and the partner ended on `pending` while the platform said `approved`. The default is
// now a quarter of that wait (15_000 / N here, as the READMEs say). Real @capi/webhook-receiver
// over loopback HTTP, real sandbox, at a time scale whose windows stay seconds wide under load.
import { createMemoryDedupeStore, createWebhookReceiver, toNodeHandler } from '@capi/webhook-receiver';
import { createPublicKeyProvider } from '@capi/webhook-signature';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../src/index.js';
import { serveWebhookEndpoint } from './support/webhook-receiver.js';

const timeScale = 10; // retries after 6, 30 and 90 s; the provider may refetch every 1.5 s
let sandbox: Sandbox;
let endpoint: { close(): Promise<void> };
let provider: ReturnType<typeof createPublicKeyProvider>;
let keyFetches = 0;
const kycStatus = new Map<string, string>();

beforeAll(async () => {
  sandbox = await startSandbox({ users: [], timeScale });
  provider = createPublicKeyProvider({
    url: `${sandbox.webhooksUrl}/api/v1/public-key`,
    minRefreshIntervalMs: 15_000 / timeScale,
    fetch: (input, init) => (keyFetches++, fetch(input, init)),
  });
  const receiver = createWebhookReceiver({
    publicKey: provider,
    dedupe: createMemoryDedupeStore(sandbox.receiverOptions()),
    onError: () => {},
  }).on('kyc.status.changed', (event) => void kycStatus.set(event.data.id, event.data.kycStatus));
  endpoint = await serveWebhookEndpoint(sandbox, toNodeHandler(receiver));
});
afterAll(async () => {
  await sandbox.close();
  await endpoint.close();
});

describe('a receiver that refused events for a rotated key ends on the platform state', () => {
  it('KYC pending, resubmissionRequested, pending, approved, refused 401 right after a rotation: the partner ends on approved, like the platform', async () => {
    const user = sandbox.users.create({ email: 'rotation@example.com' });
    await sandbox.whenDeliveriesSettled({ userId: user.id, timeoutMs: 10_000 });
    // The provider fetches the (old) key now, once its interval since the first fetch is over: the
    // events below come within its next interval, so none of them can make it refetch.
    await new Promise((resolve) => setTimeout(resolve, 15_000 / timeScale + 100));
    const fetchesBefore = keyFetches;
    await provider.refresh();
    expect(keyFetches).toBe(fetchesBefore + 1);
    await sandbox.rotateWebhookKey();
    for (const status of ['pending', 'resubmissionRequested', 'pending', 'approved'] as const) {
      sandbox.users.setKycStatus(user.id, status);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await sandbox.whenDeliveriesSettled({ userId: user.id, timeoutMs: 60_000 });

    const kyc = sandbox.deliveries({ userId: user.id, eventType: 'kyc.status.changed' });
    expect(kyc).toHaveLength(4);
    expect(kyc[0]!.attempts[0]!.status).toBe(401); // the case this test is about took place
    expect(kyc.every((delivery) => delivery.state === 'succeeded')).toBe(true);
    expect(sandbox.users.get(user.id)!.kycStatus).toBe('approved');
    expect(kycStatus.get(user.id)).toBe('approved');
  }, 90_000);
});
