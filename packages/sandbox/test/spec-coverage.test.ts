// The sandbox sends every event kind the AsyncAPI spec defines, and no other. The tests named
// "spec coverage:" (here and in conformance.test.ts) are also check:pr's sandbox gate, so that
// an event or operation added to the specs fails the review gates while the sandbox cannot
// serve it, not only `pnpm test`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readWebhookEvents } from '@capi/specs/webhook-events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_EVENT_TYPES, startSandbox, type Sandbox } from '../src/index.js';
import { completeUser } from '../src/users/complete-user.js';
import { USER_FIELDS } from '../src/users/user.js';
import { specsDist } from './support/spec-responses.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ users: [] });
});
afterAll(() => sandbox.close());

describe('the event kinds of the AsyncAPI spec', () => {
  it('spec coverage: sends exactly the event kinds of specs/dist/asyncapi.json, each with data its schema accepts', async () => {
    const events = await readWebhookEvents(JSON.parse(readFileSync(join(specsDist, 'asyncapi.json'), 'utf8')));
    const documented = events.map((event) => event.eventType);
    const missing = documented.filter((eventType) => !(SANDBOX_EVENT_TYPES as readonly string[]).includes(eventType));
    const extra = SANDBOX_EVENT_TYPES.filter((eventType) => !documented.includes(eventType));
    expect({ missing, extra }, 'event kinds the spec defines and the sandbox cannot send (missing), or the other way round (extra): add them to SANDBOX_EVENT_TYPES and sampleEventData (src/webhooks/sample-event-data.ts)').toEqual({ missing: [], extra: [] });
    // Its own sample data, checked against the event's schema before it is sent (to no endpoint).
    for (const eventType of SANDBOX_EVENT_TYPES) expect(() => sandbox.sendEvent(eventType), eventType).not.toThrow();
  });
});

describe('the User of the OpenAPI spec', () => {
  it('spec coverage: a user completed from an empty seed has exactly the fields of the spec\'s User (reference 2.1: every field present), so a field added to the spec needs its default here', () => {
    expect(Object.keys(completeUser({})).sort()).toEqual([...USER_FIELDS].sort());
  });
});
