// Express 5: the webhook route is mounted BEFORE express.json(), so that the receiver reads the
// raw bytes the signature covers. (Or give the route express.raw({ type: '*/*' }).)
import express, { type Express } from 'express';
import { createWebhookReceiver, toNodeHandler } from '@capi/webhook-receiver';
import { createdUsers, kycStatuses } from './partner-database.js';

const receiver = createWebhookReceiver({ publicKey: process.env.CAPI_WEBHOOK_PUBLIC_KEY! })
  .on('user.created', (event) => { createdUsers.push(event.data.id); })
  .on('kyc.status.changed', (event) => { kycStatuses.set(event.data.id, event.data.kycStatus); });

export const app: Express = express();
app.post('/webhooks', toNodeHandler(receiver));

// The rest of the application parses JSON as usual.
app.use(express.json());
app.get('/users/:id/kyc', (req, res) => { res.json({ kycStatus: kycStatuses.get(req.params.id) ?? null }); });

if (import.meta.url === `file://${process.argv[1]}`) app.listen(Number(process.env.PORT ?? 3000));
