import { afterEach, describe, expect, it } from 'vitest';
import { createPublicKey } from 'node:crypto';
import { createPartnerClient, InvalidArgumentError, UnexpectedResponseError } from '../src/index.js';
import { startPartnerService, startWebhookKeyService, type PartnerService } from './support/partner-service.js';

let service: PartnerService;
let keyService: Awaited<ReturnType<typeof startWebhookKeyService>> | undefined;
afterEach(async () => {
  await service?.close();
  await keyService?.close();
});

describe('fetches the webhook public key from webhooksUrl', () => {
  it('returns {success, publicKey} with a usable Ed25519 key, without a bearer token', async () => {
    service = await startPartnerService();
    keyService = await startWebhookKeyService();
    const client = createPartnerClient({ baseUrl: service.url, webhooksUrl: keyService.url });
    client.tokenManager.setTokens('some-access-token');
    const key = await client.getWebhookPublicKey();
    expect(key).toEqual({ success: true, publicKey: keyService.publicKey });
    expect(createPublicKey(key.publicKey).asymmetricKeyType).toBe('ed25519');
    expect(service.requests).toHaveLength(0);
  });

  it('refuses an answer with success: false with UnexpectedResponseError', async () => {
    service = await startPartnerService();
    keyService = await startWebhookKeyService({ status: 200, body: { success: false, publicKey: '' } });
    const client = createPartnerClient({ baseUrl: service.url, webhooksUrl: keyService.url });
    const error = await client.getWebhookPublicKey().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect((error as UnexpectedResponseError).code).toBe('public_key_unavailable');
  });

  it('asks for webhooksUrl when the client has none', async () => {
    service = await startPartnerService();
    const client = createPartnerClient({ baseUrl: service.url });
    const error = await client.getWebhookPublicKey().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toMatchObject({ argument: 'webhooksUrl', code: 'missing_webhooks_url' });
  });
});
