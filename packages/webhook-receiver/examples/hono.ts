// Hono: receiver.handle takes the Web-standard Request as it is, on Node, Bun, Deno or Workers.
import { Hono } from 'hono';
import { createWebhookReceiver } from '@capi/webhook-receiver';
import { createdUsers, kycStatuses } from './partner-database.js';

const receiver = createWebhookReceiver({ publicKey: process.env.CAPI_WEBHOOK_PUBLIC_KEY! })
  .on('user.created', (event) => { createdUsers.push(event.data.id); })
  .on('kyc.status.changed', (event) => { kycStatuses.set(event.data.id, event.data.kycStatus); });

export const app = new Hono();
app.post('/webhooks', (c) => receiver.handle(c.req.raw));

// On Node: import { serve } from '@hono/node-server'; serve({ fetch: app.fetch, port: 3000 });
// On Bun, Deno and Workers: export default app;
