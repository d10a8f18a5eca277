import type { WebhookPublicKey } from '@capi/openapi-types';
import { previewBody } from './describe-value.js';
import { readAnswerBody } from './answer-body.js';
import { InvalidArgumentError, UnexpectedResponseError } from './errors.js';
import { sendServiceRequest, type ServiceContext } from './service-request.js';
import type { RequestOptions } from './transport.js';

/**
 * Fetches the Ed25519 public key that signs the platform's webhooks (4.5) from `webhooksUrl`.
 * A key with `success: false` is refused, since the reference says it is then unusable.
 *
 * @example
 * const { publicKey } = await getWebhookPublicKey(context, 'https://webhooks.example.com');
 */
export async function getWebhookPublicKey(context: ServiceContext, webhooksUrl: string | undefined, options: RequestOptions = {}): Promise<WebhookPublicKey> {
  if (webhooksUrl === undefined) {
    throw new InvalidArgumentError(
      'webhooksUrl',
      'getWebhookPublicKey needs the webhook key service address: pass webhooksUrl to createPartnerClient.',
      'missing_webhooks_url',
    );
  }
  const answer = await sendServiceRequest(context, { method: 'GET', path: '/api/v1/public-key', baseUrl: webhooksUrl }, { ...options, auth: false });
  const data = readAnswerBody(answer);
  const key = data as Partial<WebhookPublicKey> | undefined;
  if (key?.success !== true || typeof key.publicKey !== 'string' || key.publicKey.trim() === '') {
    throw new UnexpectedResponseError(
      `The webhook key service answered without a usable key (success must be true and publicKey a string), got ${previewBody(data)}. Retry later; check webhooksUrl.`,
      { code: 'public_key_unavailable' },
    );
  }
  return key as WebhookPublicKey;
}
