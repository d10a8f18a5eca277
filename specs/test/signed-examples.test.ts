// The webhook examples are real deliveries: each signature verifies over
// `${X-Webhook-Timestamp}.${rawBody}` (reference 6.2) with the key of the getWebhookPublicKey
// example, so partners and the sandbox can replay them as test vectors.
import { createPublicKey, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readSpecOutputs } from './support/spec-outputs';

const { openapi, asyncapi, schemas } = await readSpecOutputs();
const publicKeyPem: string = openapi.paths['/api/v1/public-key'].get.responses['200'].content['application/json'].examples.key.value.publicKey;
const publicKey = createPublicKey(publicKeyPem);

const verifies = (timestamp: string, rawBody: string, signature: string) => verify(null, Buffer.from(`${timestamp}.${rawBody}`, 'utf8'), publicKey, Buffer.from(signature, 'base64'));

describe('the webhook examples are signed over timestamp.rawBody with the example public key', () => {
  it('the example key is an Ed25519 SPKI PEM, as WebhookPublicKey assumes', () => {
    expect(publicKey.asymmetricKeyType).toBe('ed25519');
    expect(publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    expect(schemas.get('WebhookPublicKey')!.examples[0].publicKey).toBe(publicKeyPem);
  });

  it.each(Object.entries(asyncapi.components.messages) as Array<[string, any]>)('%s: the signature verifies over the compact JSON body', (_name, message) => {
    const { headers, payload } = message.examples[0];
    const rawBody = JSON.stringify(payload);
    expect(Buffer.from(headers['X-Webhook-Signature'], 'base64')).toHaveLength(64);
    expect(verifies(headers['X-Webhook-Timestamp'], rawBody, headers['X-Webhook-Signature'])).toBe(true);
  });

  it('a changed body, timestamp or signature does not verify', () => {
    const { headers, payload } = asyncapi.components.messages.userCreated.examples[0];
    const rawBody = JSON.stringify(payload);
    const signature: string = headers['X-Webhook-Signature'];
    expect(verifies(headers['X-Webhook-Timestamp'], rawBody.replace('notStarted', 'approved'), signature)).toBe(false);
    expect(verifies(String(Number(headers['X-Webhook-Timestamp']) + 1), rawBody, signature)).toBe(false);
    expect(verifies(headers['X-Webhook-Timestamp'], rawBody, (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1))).toBe(false);
  });

  it('the WebhookHeaders example is the user.created delivery', () => {
    expect(schemas.get('WebhookHeaders')!.examples[0]).toEqual(asyncapi.components.messages.userCreated.examples[0].headers);
  });
});

describe('the OpenAPI webhooks and the AsyncAPI messages show the same deliveries', () => {
  it.each(Object.entries(openapi.webhooks) as Array<[string, any]>)('%s has the same example body in both specs', (eventType, item) => {
    const message = (Object.values(asyncapi.components.messages) as any[]).find((candidate) => candidate.name === eventType);
    const [example] = Object.values(item.post.requestBody.content['application/json'].examples) as any[];
    expect(example.value).toEqual(message.examples[0].payload);
  });

  it('the user.created header examples verify over that body', () => {
    const parameters = openapi.webhooks['user.created'].post.parameters;
    const header = (name: string) => parameters.find((parameter: any) => parameter.name === name).example;
    const body = JSON.stringify(openapi.webhooks['user.created'].post.requestBody.content['application/json'].examples.userCreated.value);
    expect(verifies(header('X-Webhook-Timestamp'), body, header('X-Webhook-Signature'))).toBe(true);
  });
});
