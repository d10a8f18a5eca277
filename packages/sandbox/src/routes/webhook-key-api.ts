import type { Router } from '../http/router.js';

/** Reference 4.5 on the webhooks base URL. */
export function registerWebhookKeyApi(router: Router, publicKey: string): void {
  router.on('GET', '/api/v1/public-key', () => ({ status: 200, json: { success: true, publicKey } }));
}
