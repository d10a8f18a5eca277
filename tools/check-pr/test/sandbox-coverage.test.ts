// The sandbox gate, run for real: the sandbox's spec-coverage tests against the bundled specs,
// and against a copy of them with an operation and an event kind the sandbox lacks
// (CAPI_SPECS_DIST points the sandbox's tests at the copy). Without the gate's build step
// (`build: false`): turbo has built what the sandbox imports before this suite (@capi/sandbox
// is a dev dependency), and a turbo run inside turbo's own test task is better avoided.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoRoot } from '@capi/release-tools/workspace-packages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSandboxCoverage } from '../src/sandbox-coverage-check.mjs';

const dist = path.join(repoRoot, 'specs/dist');
let seeded: string;

beforeAll(() => {
  seeded = mkdtempSync(path.join(tmpdir(), 'capi-sandbox-gate-'));
  const openapi = JSON.parse(readFileSync(path.join(dist, 'openapi.json'), 'utf8'));
  openapi.paths['/account/statements'] = {
    get: { operationId: 'listAccountStatements', summary: 'A seeded operation', responses: { 200: { description: 'The statements.' } } },
  };
  writeFileSync(path.join(seeded, 'openapi.json'), JSON.stringify(openapi));
  const asyncapi = JSON.parse(readFileSync(path.join(dist, 'asyncapi.json'), 'utf8'));
  asyncapi.components.schemas.CardStatementCreatedEvent = {
    title: 'CardStatementCreatedEvent',
    type: 'object',
    required: ['eventType', 'data'],
    properties: { eventType: { const: 'card.statement.created' }, data: { type: 'object' } },
  };
  asyncapi.components.messages.cardStatementCreated = { ...asyncapi.components.messages.cardTransactionCreated, name: 'card.statement.created', title: 'card.statement.created', 'x-event-type': 'card.statement.created', payload: { $ref: '#/components/schemas/CardStatementCreatedEvent' } };
  asyncapi.channels.partnerWebhook.messages.cardStatementCreated = { $ref: '#/components/messages/cardStatementCreated' };
  asyncapi.operations.receiveCardStatementCreated = {
    ...asyncapi.operations.receiveCardTransactionCreated,
    title: 'Receive card.statement.created',
    messages: [{ $ref: '#/channels/partnerWebhook/messages/cardStatementCreated' }],
  };
  writeFileSync(path.join(seeded, 'asyncapi.json'), JSON.stringify(asyncapi));
});
afterAll(() => rmSync(seeded, { recursive: true, force: true }));

describe('the sandbox gate', () => {
  it('passes on the specs the sandbox serves', async () => {
    const result = await checkSandboxCoverage({ root: repoRoot, build: false });
    expect(result).toMatchObject({ ok: true, details: [], summary: expect.stringMatching(/\(\d{2,} tests\)$/) });
  }, 180_000);

  it('fails when no test named "spec coverage:" ran in a file it runs (renamed, the gate would check nothing)', async () => {
    const result = await checkSandboxCoverage({ root: repoRoot, build: false, files: ['test/spec-coverage.test.ts', 'test/cors.test.ts'] });
    expect(result.ok).toBe(false);
    expect(result.summary).toContain('no test named "spec coverage: ..." ran in test/cors.test.ts of @capi/sandbox');
  }, 180_000);

  it('fails on a spec with an operation and an event kind the sandbox lacks, naming both and what to do', async () => {
    const result = await checkSandboxCoverage({ root: repoRoot, build: false, env: { ...process.env, CAPI_SPECS_DIST: seeded } });
    expect(result.ok).toBe(false);
    expect(result.summary).toMatch(/SANDBOX_EVENT_TYPES .*then run `pnpm --filter @capi\/sandbox test`/);
    const details = result.details.join('\n');
    expect(details).toContain('listAccountStatements 200');
    expect(details).toContain('card.statement.created');
  }, 180_000);
});
