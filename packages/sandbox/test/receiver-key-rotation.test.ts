// After a rotation of the webhook key, a receiver whose provider may not refetch the key yet
// answers 401 and keeps what it refused, to record the authentic ones as retries due once it has
// the new key. Against a sandbox with a time scale (the receiver's options scaled as its README
// says), the provider may refetch only when the first retry comes: the refused events are then
// shown authentic too late for the store, and the retry of the first one, taken for a new event,
// used to supersede the retries of the user's later events (the partner ended on `pending` while
// the platform said `approved`). Real @capi/webhook-receiver over loopback HTTP, real sandbox.
import { createMemoryDedupeStore, createWebhookReceiver, toNodeHandler } from '@capi/webhook-receiver';
import { createPublicKeyProvider } from '@capi/webhook-signature';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../src/index.js';
import { serveWebhookEndpoint } from './support/webhook-receiver.js';

let sandbox: Sandbox;
let endpoint: { close(): Promise<void> };
const kycStatus = new Map<string, string>();

beforeAll(async () => {
  sandbox = await startSandbox({ users: [], timeScale: 60 });
  const options = sandbox.receiverOptions();
  const receiver = createWebhookReceiver({
    publicKey: createPublicKeyProvider({ url: `${sandbox.webhooksUrl}/api/v1/public-key`, minRefreshIntervalMs: options.minRetryDelayMs }),
    dedupe: createMemoryDedupeStore(options),
    onError: () => {},
  }).on('kyc.status.changed', (event) => void kycStatus.set(event.data.id, event.data.kycStatus));
  endpoint = await serveWebhookEndpoint(sandbox, toNodeHandler(receiver));
});
afterAll(async () => {
  await sandbox.close();
  await endpoint.close();
});

describe('a receiver that refused events for a rotated key ends on the platform state', () => {
  it('KYC pending, resubmissionRequested, pending, approved, all refused 401 after a rotation: the partner ends on approved', async () => {
    const user = sandbox.users.create({ email: 'rotation@example.com' }); // user.created: the provider fetches the key
    await sandbox.whenDeliveriesSettled({ userId: user.id, timeoutMs: 10_000 });
    await sandbox.rotateWebhookKey();
    for (const status of ['pending', 'resubmissionRequested', 'pending', 'approved'] as const) {
      sandbox.users.setKycStatus(user.id, status); // signed with the new key, within the provider's interval: 401
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await sandbox.whenDeliveriesSettled({ userId: user.id, timeoutMs: 25_000 });
    const kyc = sandbox.deliveries({ userId: user.id, eventType: 'kyc.status.changed' });
    expect(kyc.map((delivery) => delivery.attempts[0]!.status)).toEqual([401, 401, 401, 401]);
    expect(kyc.every((delivery) => delivery.state === 'succeeded')).toBe(true);
    expect(kycStatus.get(user.id)).toBe(sandbox.users.get(user.id)!.kycStatus);
    expect(kycStatus.get(user.id)).toBe('approved');
  });
});
