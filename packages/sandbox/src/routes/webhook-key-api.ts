import type { Router } from '../http/router.js';
import type { WebhookKey } from '../webhooks/webhook-key.js';

/**
 * Reference 4.5 on the webhooks base URL: the current key with `success: true`, or
 * `success: false` and no key while the sandbox is told so (`PUT /__sandbox/webhook-key`).
 */
export function registerWebhookKeyApi(router: Router, key: WebhookKey): void {
  router.on('GET', '/api/v1/public-key', () => ({ status: 200, json: key.answer() }));
}
