import { generateWebhookKeyPair, signWebhook } from '@capi/webhook-signature';

/** Plays the service's side of delivery: one key pair, signs bodies and POSTs them. */
export interface FakeService {
  readonly publicKey: string;
  readonly privateKey: string;
  /** Signs `rawBody` (now, or at `timestamp` seconds) and POSTs it to `url`. */
  deliver(url: string, rawBody: string, options?: { timestamp?: number; headers?: Record<string, string> }): Promise<Delivered>;
  /** Delivers like the service: retries every non-2xx answer (without the service's minutes of backoff). */
  deliverUntilAcknowledged(url: string, rawBody: string, maxAttempts?: number): Promise<Delivered[]>;
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
  return {
    publicKey,
    privateKey,
    deliver,
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
