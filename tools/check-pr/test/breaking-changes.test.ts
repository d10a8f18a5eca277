import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '@capi/release-tools/workspace-packages';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkBreakingChanges } from '../src/breaking-change-check.mjs';
import { changeset, createFixtureRepo, released, type FixtureRepo } from './fixture-repo';

let repo: FixtureRepo;
beforeEach(() => {
  repo = createFixtureRepo();
  repo.write('specs/released/openapi.json', released('openapi'));
  repo.write('specs/released/asyncapi.json', released('asyncapi'));
});
afterEach(() => repo.remove());

function changeSpecs(edit: { openapi?: (spec: any) => void; asyncapi?: (spec: any) => void }) {
  const openapi = released('openapi');
  const asyncapi = released('asyncapi');
  edit.openapi?.(openapi);
  edit.asyncapi?.(asyncapi);
  repo.write('specs/dist/openapi.json', openapi);
  repo.write('specs/dist/asyncapi.json', asyncapi);
}

const openapiConsumers = ['@capi/openapi-types', '@capi/client', '@capi/sandbox'];
const asyncapiConsumers = ['@capi/event-types', '@capi/webhook-validator', '@capi/webhook-receiver'];
const majorFor = (names: string[]) => Object.fromEntries(names.map((name) => [name, 'major' as const]));

describe('passes when the specs equal the released specs', () => {
  it('reports no breaking change', async () => {
    changeSpecs({});
    const result = await checkBreakingChanges({ root: repo.root });
    expect(result.ok).toBe(true);
    expect(result.summary).toContain('none breaking');
  });
});

describe('passes a compatible change without a major changeset', () => {
  it('accepts a new optional request field, a new response field and a new operation', async () => {
    changeSpecs({
      openapi: (spec) => {
        spec.components.schemas.SetAccountLimitRequest.properties.note = { type: 'string', description: 'A note' };
        spec.components.schemas.AccountLimit.properties.updatedAt = { type: 'string', description: 'When' };
        spec.paths['/api/v1/public-key'] = {
          get: { operationId: 'getWebhookPublicKey', responses: { 200: { description: 'The key', content: { 'application/json': { schema: { type: 'object' } } } } } },
        };
      },
      asyncapi: (spec) => {
        spec.components.schemas.User.properties.city = { type: ['string', 'null'], description: 'City' };
      },
    });
    repo.write('.changeset/additions.md', changeset({ '@capi/client': 'minor' }));
    const result = await checkBreakingChanges({ root: repo.root });
    expect(result.ok).toBe(true);
    expect(result.details).toEqual([]);
  });
});

describe('fails a breaking OpenAPI change without a major changeset for the OpenAPI packages', () => {
  it('rejects a removed operation and names the packages that need a major changeset', async () => {
    changeSpecs({ openapi: (spec) => delete spec.paths['/api/v1/auth/nonce'] });
    const result = await checkBreakingChanges({ root: repo.root });
    expect(result.ok).toBe(false);
    const report = result.details.join('\n');
    expect(report).toContain('/api/v1/auth/nonce');
    for (const name of openapiConsumers) expect(report).toContain(`"${name}": major`);
    for (const name of asyncapiConsumers) expect(report).not.toContain(name);
  });

  it('rejects a request field that became required', async () => {
    changeSpecs({ openapi: (spec) => spec.components.schemas.SetAccountLimitRequest.required.push('currency') });
    const result = await checkBreakingChanges({ root: repo.root });
    expect(result.ok).toBe(false);
    expect(result.details.join('\n')).toMatch(/currency/);
  });

  it('rejects a narrowed request limit', async () => {
    changeSpecs({ openapi: (spec) => (spec.components.schemas.SetAccountLimitRequest.properties.amount.maximum = 5000) });
    const result = await checkBreakingChanges({ root: repo.root });
    expect(result.ok).toBe(false);
    expect(result.details.join('\n')).toMatch(/amount/);
  });

  it('rejects a removed response field', async () => {
    changeSpecs({ openapi: (spec) => delete spec.components.schemas.AccountLimit.properties.currency });
    const result = await checkBreakingChanges({ root: repo.root });
    expect(result.ok).toBe(false);
    expect(result.details.join('\n')).toMatch(/currency/);
  });

  it('rejects a response enum that gained a value clients do not know', async () => {
    changeSpecs({ openapi: (spec) => spec.components.schemas.AccountLimit.properties.syncStatus.enum.push('failed') });
    const result = await checkBreakingChanges({ root: repo.root });
    expect(result.ok).toBe(false);
    expect(result.details.join('\n')).toMatch(/failed/);
  });

  it('still fails when only some of the OpenAPI packages have a major changeset', async () => {
    changeSpecs({ openapi: (spec) => delete spec.paths['/api/v1/auth/nonce'] });
    repo.write('.changeset/partial.md', changeset({ '@capi/openapi-types': 'major', '@capi/client': 'minor' }));
    const result = await checkBreakingChanges({ root: repo.root });
    expect(result.ok).toBe(false);
    const report = result.details.join('\n');
    expect(report).toContain('"@capi/client": major');
    expect(report).toContain('"@capi/sandbox": major');
    expect(report).not.toContain('"@capi/openapi-types": major');
  });
});

describe('passes a breaking change released as major for every affected package', () => {
  it('accepts a removed operation with major changesets for the OpenAPI packages', async () => {
    changeSpecs({ openapi: (spec) => delete spec.paths['/api/v1/auth/nonce'] });
    repo.write('.changeset/remove-nonce.md', changeset(majorFor(openapiConsumers), 'The nonce operation is gone.'));
    const result = await checkBreakingChanges({ root: repo.root });
    expect(result.ok).toBe(true);
    expect(result.summary).toContain('released as major');
  });
});

describe('fails a breaking AsyncAPI change without a major changeset for the event packages', () => {
  it('rejects a property removed from an event payload', async () => {
    changeSpecs({ asyncapi: (spec) => delete spec.components.schemas.User.properties.email });
    repo.write('.changeset/openapi-only.md', changeset(majorFor(openapiConsumers)));
    const result = await checkBreakingChanges({ root: repo.root });
    expect(result.ok).toBe(false);
    const report = result.details.join('\n');
    expect(report).toMatch(/asyncapi: \d+ breaking change/);
    expect(report).toContain('email');
    for (const name of asyncapiConsumers) expect(report).toContain(`"${name}": major`);
  });

  it('rejects an event enum that gained a value receivers do not know', async () => {
    changeSpecs({ asyncapi: (spec) => spec.components.schemas.User.properties.kycStatus.enum.push('rejected') });
    const result = await checkBreakingChanges({ root: repo.root });
    expect(result.ok).toBe(false);
    expect(result.details.join('\n')).toContain('rejected');
  });
});

describe('rates event changes for the receivers, on the real asyncapi.json (operations `action: receive`)', () => {
  // redocly diff sees the message of a `receive` operation as an input; the event packages read it.
  function changeRealEvents(edit: (spec: any) => void) {
    const spec = JSON.parse(readFileSync(path.join(repoRoot, 'specs/released/asyncapi.json'), 'utf8'));
    repo.write('specs/released/asyncapi.json', structuredClone(spec));
    edit(spec);
    repo.write('specs/dist/openapi.json', released('openapi'));
    repo.write('specs/dist/asyncapi.json', spec);
  }

  it.each([
    ['a User property removed', 'kycStatus', (spec: any) => {
      const user = spec.components.schemas.User;
      delete user.properties.kycStatus;
      user.required = user.required.filter((field: string) => field !== 'kycStatus');
    }],
    ['a User property made nullable', 'id', (spec: any) => (spec.components.schemas.User.properties.id.type = ['string', 'null'])],
    ['a User property no longer required', 'required', (spec: any) => {
      const user = spec.components.schemas.User;
      user.required = user.required.filter((field: string) => field !== 'phone');
    }],
    ['a KycStatus value added', 'enum', (spec: any) => spec.components.schemas.KycStatus.enum.push('expired')],
    // A new member of the closed WebhookEvent union, as an enum value is (the maintainers' L7).
    ['an event kind added', 'A new event kind', (spec: any) => {
      spec.components.schemas.CardStatementCreatedEvent = { title: 'CardStatementCreatedEvent', type: 'object', required: ['eventType', 'data'], properties: { eventType: { const: 'card.statement.created' }, data: { type: 'object' } } };
      spec.components.messages.cardStatementCreated = { ...spec.components.messages.cardTransactionCreated, name: 'card.statement.created', title: 'card.statement.created', payload: { $ref: '#/components/schemas/CardStatementCreatedEvent' } };
      spec.channels.partnerWebhook.messages.cardStatementCreated = { $ref: '#/components/messages/cardStatementCreated' };
      spec.operations.receiveCardStatementCreated = { ...spec.operations.receiveCardTransactionCreated, title: 'Receive card.statement.created', messages: [{ $ref: '#/channels/partnerWebhook/messages/cardStatementCreated' }] };
    }],
  ])('rejects %s without a major changeset for the event packages', async (_change, named, edit) => {
    changeRealEvents(edit);
    const result = await checkBreakingChanges({ root: repo.root });
    expect(result.ok).toBe(false);
    const report = result.details.join('\n');
    expect(report).toMatch(/asyncapi: \d+ breaking change/);
    expect(report).toContain(named);
    for (const name of asyncapiConsumers) expect(report).toContain(`"${name}": major`);
  });

  it('accepts a new optional User property and a field that became non-nullable', async () => {
    changeRealEvents((spec) => {
      const user = spec.components.schemas.User;
      user.properties.preferredName = { type: ['string', 'null'], description: 'Preferred name' };
      user.properties.email.type = 'string';
    });
    const result = await checkBreakingChanges({ root: repo.root });
    expect(result.details).toEqual([]);
    expect(result.ok).toBe(true);
  });
});

describe('needs the bundled specs of the change', () => {
  it('fails with the command to run when specs/dist is missing', async () => {
    const result = await checkBreakingChanges({ root: repo.root });
    expect(result.ok).toBe(false);
    expect(result.details.join('\n')).toContain('pnpm --filter @capi/specs build');
  });

  it('passes with a note when there is no released baseline yet', async () => {
    changeSpecs({});
    const result = await checkBreakingChanges({ root: repo.root, releasedDir: `${repo.root}/specs/never-released` });
    expect(result.ok).toBe(true);
    expect(result.summary).toContain('no released baseline');
  });
});
