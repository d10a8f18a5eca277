// A bare node:http server receiving capi webhooks on POST /webhooks.
import { createServer } from 'node:http';
import { createWebhookReceiver, toNodeHandler } from '@capi/webhook-receiver';
import { createdUsers, kycStatuses } from './partner-database.js';

const receiver = createWebhookReceiver({ publicKey: process.env.CAPI_WEBHOOK_PUBLIC_KEY! })
  .on('user.created', (event) => { createdUsers.push(event.data.id); })
  .on('kyc.status.changed', (event) => { kycStatuses.set(event.data.id, event.data.kycStatus); });

const handleWebhook = toNodeHandler(receiver);

export const server = createServer((req, res) => {
  if (req.url === '/webhooks') return void handleWebhook(req, res);
  res.writeHead(404).end();
});

if (import.meta.url === `file://${process.argv[1]}`) server.listen(Number(process.env.PORT ?? 3000));
