import { serve } from '@hono/node-server';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookReceiver, toNodeHandler } from '../src/index.js';
import { createdUsers, kycStatuses } from '../examples/partner-database.js';
import { eventBody } from './helpers/events.js';
import { createFakeService, type FakeService } from './helpers/service.js';
import { listen, listenFetch, type RunningServer } from './helpers/servers.js';

let service: FakeService;
const running: RunningServer[] = [];

beforeAll(async () => {
  service = await createFakeService();
  // The examples read their key from the environment at import time, as a deployment would.
  process.env.CAPI_WEBHOOK_PUBLIC_KEY = service.publicKey;
});

afterAll(async () => {
  await Promise.all(running.map((server) => server.close()));
});

async function track(server: Promise<RunningServer>): Promise<string> {
  const started = await server;
  running.push(started);
  return started.url;
}

/** The same delivery story for every example: a new user, then a KYC change, then a retry of it. */
async function expectExampleToProcessDeliveries(url: string, userId: string): Promise<void> {
  expect(await service.deliver(`${url}/webhooks`, eventBody('user.created', userId))).toMatchObject({ status: 200, body: { code: 'processed' } });
  const kycChange = eventBody('kyc.status.changed', userId, { kycStatus: 'rejected' });
  expect((await service.deliver(`${url}/webhooks`, kycChange)).status).toBe(200);
  expect(await service.deliver(`${url}/webhooks`, kycChange)).toMatchObject({ status: 200, body: { code: 'duplicate' } });
  expect(createdUsers).toContain(userId);
  expect(kycStatuses.get(userId)).toBe('rejected');
  const forged = await createFakeService();
  expect((await forged.deliver(`${url}/webhooks`, eventBody('user.created', `${userId}-forged`))).status).toBe(401);
  expect(createdUsers).not.toContain(`${userId}-forged`);
}

describe('node:http example', () => {
  it('receives, verifies and processes deliveries on POST /webhooks', async () => {
    const { server } = await import('../examples/node-http.js');
    const url = await track(listen(server));
    await expectExampleToProcessDeliveries(url, 'node-http-user');
    expect((await fetch(`${url}/elsewhere`)).status).toBe(404);
  });
});

describe('Express example', () => {
  it('receives deliveries on a route mounted before express.json(), while other routes parse JSON', async () => {
    const { app } = await import('../examples/express.js');
    const url = await track(listen(app));
    await expectExampleToProcessDeliveries(url, 'express-user');
    expect(await (await fetch(`${url}/users/express-user/kyc`)).json()).toEqual({ kycStatus: 'rejected' });
  });

  it('answers 500 body_already_consumed, saying how to fix it, when express.json() ran first', async () => {
    const reported: string[] = [];
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, onError: (_error, context) => { reported.push(context.outcome); } });
    const misordered = express();
    misordered.use(express.json());
    misordered.post('/webhooks', toNodeHandler(receiver));
    const url = await track(listen(misordered));
    const reply = await service.deliver(`${url}/webhooks`, eventBody('user.created', 'parsed-too-early'));
    expect(reply.status).toBe(500);
    expect(reply.body.code).toBe('body_already_consumed');
    expect(reply.body.message).toMatch(/before any body parser/);
    expect(reply.body.message).toMatch(/express\.raw/);
    expect(reported).toEqual(['body_already_consumed']);
  });

  it('says that express.raw() on the route cannot help while an app-wide express.json() runs before it', async () => {
    const receiver = createWebhookReceiver({ publicKey: service.publicKey, onError: () => undefined });
    const jsonFirst = express();
    jsonFirst.use(express.json());
    jsonFirst.post('/webhooks', express.raw({ type: '*/*' }), toNodeHandler(receiver));
    const url = await track(listen(jsonFirst));
    const reply = await service.deliver(`${url}/webhooks`, eventBody('user.created', 'json-before-raw'));
    expect(reply).toMatchObject({ status: 500, body: { code: 'body_already_consumed' } });
    expect(reply.body.message).toMatch(/app\.use\(express\.json\(\)\) that runs before the route parses first/);
  });

  it('reads the body itself when a parser only left the empty req.body placeholder (body-parser 1.x)', async () => {
    const processed: string[] = [];
    const receiver = createWebhookReceiver({ publicKey: service.publicKey }).onAny((event) => { processed.push(event.data.id as string); });
    const withPlaceholder = express();
    withPlaceholder.use((req, _res, next) => { req.body = {}; next(); });
    withPlaceholder.post('/webhooks', toNodeHandler(receiver));
    const url = await track(listen(withPlaceholder));
    expect((await service.deliver(`${url}/webhooks`, eventBody('user.created', 'placeholder-user'))).status).toBe(200);
    expect(processed).toEqual(['placeholder-user']);
  });

  it('accepts the bytes of express.raw() on the webhook route', async () => {
    const processed: string[] = [];
    const receiver = createWebhookReceiver({ publicKey: service.publicKey }).onAny((event) => { processed.push(event.data.id as string); });
    const withRaw = express();
    withRaw.post('/webhooks', express.raw({ type: '*/*' }), toNodeHandler(receiver));
    const url = await track(listen(withRaw));
    expect((await service.deliver(`${url}/webhooks`, eventBody('user.created', 'raw-user'))).status).toBe(200);
    expect(processed).toEqual(['raw-user']);
  });
});

describe('Hono example', () => {
  it('receives deliveries through receiver.handle(c.req.raw) on @hono/node-server', async () => {
    const { app } = await import('../examples/hono.js');
    const url = await track(new Promise<RunningServer>((resolve) => {
      const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
        resolve({ url: `http://127.0.0.1:${info.port}`, close: () => new Promise((done) => server.close(() => done())) });
      });
    }));
    await expectExampleToProcessDeliveries(url, 'hono-user');
  });
});

describe('Next.js route handler example', () => {
  it('answers real Requests through the exported POST, served over a node:http bridge', async () => {
    const { POST } = await import('../examples/nextjs/app/webhooks/route.js');
    const url = await track(listenFetch((request) => POST(request)));
    await expectExampleToProcessDeliveries(url, 'nextjs-user');
  });
});
