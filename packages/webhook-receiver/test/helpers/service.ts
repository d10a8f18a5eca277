import { generateWebhookKeyPair, signWebhook } from '@capi/webhook-signature';
import type { DeliverySource, WebhookReceiver } from '../../src/index.js';

/** Plays the service's side of delivery: one key pair, signs bodies and POSTs them. */
export interface FakeService {
  readonly publicKey: string;
  readonly privateKey: string;
  /** Signs `rawBody` (now, or at `timestamp` seconds) and POSTs it to `url`. */
  deliver(url: string, rawBody: string, options?: { timestamp?: number; headers?: Record<string, string> }): Promise<Delivered>;
  /** Delivers like the service: retries every non-2xx answer (without the service's minutes of backoff). */
  deliverUntilAcknowledged(url: string, rawBody: string, maxAttempts?: number): Promise<Delivered[]>;
  /** `rawBody` signed now, as a `receiver.receive` source; `readRawBody` replaces how its body is read. */
  signedSource(rawBody: string, readRawBody?: () => Promise<Uint8Array>): Promise<DeliverySource>;
  /** Signs `rawBody` now and gives it to `receiver.receive` in process; resolves once its work after the reply is done too. */
  receive(receiver: WebhookReceiver, rawBody: string): Promise<{ status: number; code: string }>;
}

/** A reply as the service sees it. */
export interface Delivered {
  readonly status: number;
  readonly body: { code?: string; message?: string };
}

export async function createFakeService(): Promise<FakeService> {
  const { publicKey, privateKey } = await generateWebhookKeyPair();
  const deliver: FakeService['deliver'] = async (url, rawBody, options = {}) => {
    const signed = await signWebhook({ rawBody, privateKey, timestamp: options.timestamp });
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signed.headers, ...options.headers },
      body: rawBody,
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Delivered['body']) };
  };
  const signedSource: FakeService['signedSource'] = async (rawBody, readRawBody = async () => new TextEncoder().encode(rawBody)) => {
    const { headers } = await signWebhook({ rawBody, privateKey });
    const lowerCase = new Map(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
    return { method: 'POST', header: (name) => lowerCase.get(name), readRawBody };
  };
  return {
    publicKey,
    privateKey,
    deliver,
    signedSource,
    async receive(receiver, rawBody) {
      const { reply, afterReply } = await receiver.receive(await signedSource(rawBody));
      await afterReply;
      return { status: reply.status, code: (JSON.parse(reply.body) as { code: string }).code };
    },
    async deliverUntilAcknowledged(url, rawBody, maxAttempts = 50) {
      const replies: Delivered[] = [];
      for (let attempt = 0; attempt < maxAttempts; attempt++) {
        const reply = await deliver(url, rawBody);
        replies.push(reply);
        if (reply.status >= 200 && reply.status < 300) return replies;
        await new Promise((resolve) => setTimeout(resolve, 20 * Math.min(attempt + 1, 10)));
      }
      throw new Error(`not acknowledged after ${maxAttempts} attempts: ${JSON.stringify(replies.at(-1))}`);
    },
  };
}
