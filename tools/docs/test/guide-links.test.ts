import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '@capi/release-tools/workspace-packages';
import { guidePage, readGuides, referenceLink } from '../src/guides.mjs';
import { headings } from '../src/package-reference.mjs';

const links = {
  operations: new Set(['getNonce', 'verifySiweSignature', 'getWebhookPublicKey', 'getUser']),
  routes: new Map([
    ['GET /api/v1/auth/nonce', 'getNonce'],
    ['POST /api/v1/auth/challenge', 'verifySiweSignature'],
    ['GET /api/v1/public-key', 'getWebhookPublicKey'],
  ]),
  symbols: new Map([
    ['createPartnerClient', '/packages/client/reference/index.md#createpartnerclient'],
    ['getUser', '/packages/client/reference/onboarding.md#getuser'],
  ]),
  members: new Map([
    ['signInWithEthereum', ['/packages/client/reference/index.md#signinwithethereum']],
    ['handle', ['/packages/webhook-receiver/reference/index.md#handle', '/packages/sandbox/reference/api.md#handle']],
  ]),
};

describe('a guide links the code it names to its reference', () => {
  it('links an operation named by its route, with or without a server variable', () => {
    expect(referenceLink('GET /api/v1/auth/nonce', links)).toBe('../api/getNonce.md');
    expect(referenceLink('POST /api/v1/auth/challenge', links)).toBe('../api/verifySiweSignature.md');
    expect(referenceLink('GET {webhooks_url}/api/v1/public-key', links)).toBe('../api/getWebhookPublicKey.md');
  });

  it('links nothing for a route the spec does not have, or the wrong method', () => {
    expect(referenceLink('GET /__sandbox/one-time-passwords', links)).toBeUndefined();
    expect(referenceLink('POST /api/v1/auth/nonce', links)).toBeUndefined();
  });

  it('links an operationId to its operation, and a call with arguments to the package function of that name', () => {
    expect(referenceLink('getNonce', links)).toBe('../api/getNonce.md');
    expect(referenceLink('getUser', links)).toBe('../api/getUser.md');
    expect(referenceLink('getUser(client)', links)).toBe('/packages/client/reference/onboarding.md#getuser');
  });

  it('links an exported symbol, called or not', () => {
    expect(referenceLink('createPartnerClient()', links)).toBe('/packages/client/reference/index.md#createpartnerclient');
    expect(referenceLink('createPartnerClient({ ..., maxDailyLimitCents })', links)).toBe('/packages/client/reference/index.md#createpartnerclient');
  });

  it('links a method reached through a value only when one class or interface has it', () => {
    expect(referenceLink('client.signInWithEthereum', links)).toBe('/packages/client/reference/index.md#signinwithethereum');
    expect(referenceLink('client.signInWithEthereum({ domain })', links)).toBe('/packages/client/reference/index.md#signinwithethereum');
    expect(referenceLink('receiver.handle', links)).toBeUndefined();
    expect(referenceLink('delivery.timestamp', links)).toBeUndefined();
  });

  it('rewrites code spans of the text, never code blocks or spans that already link', () => {
    const markdown = '# Sign in\n\nCall `GET /api/v1/auth/nonce`, then [`getNonce`](https://example.invalid).\n\n```ts\n// `getNonce` here is code\n```\n';
    const page = guidePage({ slug: 'sign-in', title: 'Sign in', file: 'x.md', audience: 'partners', markdown }, links);
    expect(page).toContain('Call [`GET /api/v1/auth/nonce`](../api/getNonce.md), then [`getNonce`](https://example.invalid).');
    expect(page).toContain('// `getNonce` here is code');
  });

  it('points a link to the AsyncAPI spec (which resolves in the repository) at the site\'s event reference', () => {
    const markdown = '# Receiving\n\nSee the [event reference](../../specs/asyncapi.yaml).\n';
    const page = guidePage({ slug: 'receiving-webhooks', title: 'Receiving', file: 'x.md', audience: 'partners', markdown }, links);
    expect(page).toContain('See the [event reference](../events/index.md).');
  });

  it('points a link to a package\'s README (which resolves in the repository) at the site\'s package page, anchor kept', () => {
    const markdown = '# Receiving\n\nSee the [package reference](../../packages/webhook-receiver/README.md#replies-and-statuses).\n';
    const page = guidePage({ slug: 'receiving-webhooks', title: 'Receiving', file: 'x.md', audience: 'partners', markdown }, links);
    expect(page).toContain('See the [package reference](../packages/webhook-receiver/index.md#replies-and-statuses).');
  });
});

describe('heading ids as VitePress gives them', () => {
  it('slugs each heading and numbers its repeats, skipping code fences', () => {
    const markdown = '# index\n\n### PartnerClient\n\n##### getDailyLimit()\n\n###### options?\n\n```md\n## not a heading\n```\n\n### TokenManager\n\n###### options?\n\n##### body\\_already\\_consumed\n';
    expect(headings(markdown)).toEqual([
      { level: 1, text: 'index', id: 'index' },
      { level: 3, text: 'PartnerClient', id: 'partnerclient' },
      { level: 5, text: 'getDailyLimit()', id: 'getdailylimit' },
      { level: 6, text: 'options?', id: 'options' },
      { level: 3, text: 'TokenManager', id: 'tokenmanager' },
      { level: 6, text: 'options?', id: 'options-1' },
      { level: 5, text: 'body_already_consumed', id: 'body-already-consumed' },
    ]);
  });
});

describe('links between guides', () => {
  it('name a file of docs/guides, numeric prefix included, so that they resolve in the repository as on the site', () => {
    const dir = path.join(repoRoot, 'docs/guides');
    const broken = readGuides(dir).flatMap((guide) =>
      [...guide.markdown.matchAll(/\]\((\.\/[^)#\s]+\.md)(?:#[^)]*)?\)/g)]
        .map((link) => link[1]!)
        .filter((target) => !existsSync(path.join(dir, target)))
        .map((target) => `${path.basename(guide.file)} links ${target}`),
    );
    expect(broken).toEqual([]);
  });

  it('are never site-absolute (/packages/...): a link that only resolves on the site is broken in the repository', () => {
    const dir = path.join(repoRoot, 'docs/guides');
    const absolute = readGuides(dir).flatMap((guide) =>
      [...guide.markdown.split(/^```[\s\S]*?^```\s*$/m).join('').matchAll(/\]\((\/[^)\s]*)\)/g)].map((link) => `${path.basename(guide.file)} links ${link[1]!}`));
    expect(absolute).toEqual([]);
  });

  it('that leave docs/guides (../) name a file of the repository, so that they resolve there too', () => {
    const dir = path.join(repoRoot, 'docs/guides');
    const broken = readGuides(dir).flatMap((guide) =>
      [...guide.markdown.split(/^```[\s\S]*?^```\s*$/m).join('').matchAll(/\]\((\.\.\/[^)#\s]+)(?:#[^)]*)?\)/g)]
        .map((link) => link[1]!)
        .filter((target) => !existsSync(path.join(dir, target)))
        .map((target) => `${path.basename(guide.file)} links ${target}`),
    );
    expect(broken).toEqual([]);
  });
});
