// Next.js (app router) route handler: app/webhooks/route.ts (serves POST /webhooks). Route handlers never parse
// the body themselves, so the Request reaches the receiver untouched.
import { createWebhookReceiver } from '@capi/webhook-receiver';
import { createdUsers, kycStatuses } from '../../../partner-database.js';

// node:crypto is the fast path for hashing; the receiver also runs on the edge runtime.
export const runtime = 'nodejs';

const receiver = createWebhookReceiver({ publicKey: process.env.CAPI_WEBHOOK_PUBLIC_KEY! })
  .on('user.created', (event) => { createdUsers.push(event.data.id); })
  .on('kyc.status.changed', (event) => { kycStatuses.set(event.data.id, event.data.kycStatus); });

export async function POST(request: Request): Promise<Response> {
  return receiver.handle(request);
}
