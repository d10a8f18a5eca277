import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { publishablePackages, repoRoot } from '@capi/release-tools/workspace-packages';
import { extractTsSamples, typeCheckSamples } from '../src/code-samples.mjs';
import { readGuides } from '../src/guides.mjs';

const guides = readGuides(path.join(repoRoot, 'docs/guides'));
const packages = publishablePackages();
const samples = guides.flatMap((guide) =>
  extractTsSamples(guide.markdown).map((sample, index) => ({ ...sample, name: `${guide.slug}-${index + 1}`, file: path.relative(repoRoot, guide.file) })),
);

describe('the guides cover what partners do', () => {
  it('has a guide for the quick start, sign-in, webhooks with Express, Hono and Next.js, the daily limit and the sandbox', () => {
    const titles = guides.map((guide) => guide.title.toLowerCase()).join(' | ');
    for (const topic of ['quick start', 'sign-in', 'webhooks', 'daily spending limit', 'sandbox', 'onboarding a user on the newer generation', 'migrating an existing user', "a user's journey on the older generation"]) expect(titles).toContain(topic);
    const webhooks = readFileSync(path.join(repoRoot, 'docs/guides/03-receiving-webhooks.md'), 'utf8');
    for (const framework of ['## Express', '## Hono', '## Next.js']) expect(webhooks).toContain(framework);
  });
});

describe('the TypeScript samples of the guides compile against the built packages', () => {
  it('finds samples in every guide that shows code', () => {
    expect(samples.length).toBeGreaterThanOrEqual(8);
    for (const guide of ['quick-start', 'sign-in', 'receiving-webhooks', 'daily-limit', 'sandbox', 'onboarding-newer-generation', 'migrating-an-existing-user', 'older-generation']) {
      expect(samples.some((sample) => sample.name.startsWith(`${guide}-`))).toBe(true);
    }
  });

  it('type-checks every sample with tsc (strict; moduleResolution bundler with paths to the workspace packages, and node16)', async () => {
    const result = await typeCheckSamples(samples, { packages });
    expect(result.output).toBe('');
    expect(result.ok).toBe(true);
  }, 120_000);

  it('fails on a sample that calls an API the packages do not have', async () => {
    const broken = {
      name: 'seeded-fault',
      file: 'docs/guides/seeded.md',
      line: 1,
      code: "import { createPartnerClient } from '@capi/client';\nconst client = createPartnerClient({ baseUrl: 'http://localhost:4010' });\nawait client.getDailyLimits();\n",
    };
    const result = await typeCheckSamples([broken], { packages });
    expect(result.ok).toBe(false);
    expect(result.output).toContain('seeded-fault.ts');
    expect(result.output).toMatch(/getDailyLimits.*does not exist/);
  }, 120_000);
});
