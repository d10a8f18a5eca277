// A maintainer adding or editing a webhook example signs it with `pnpm sign:examples`; the lint
// refuses one that does not verify (a copied signature, an edited body), at the line it is on.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildSpecOutputs } from '../scripts/bundle.mjs';
import { lintSignedExamples } from '../scripts/lib/signed-examples.mjs';
import { signExamples } from '../scripts/sign-examples.mjs';
import { createScratchSpecs, specsDir, type ScratchSpecs } from './support/scratch-specs';

interface LintProblem { tool: string; rule: string; file: string; line: number; message: string }

const signedProblemsOf = async (dir: string) => {
  const outputs: Map<string, string> = await buildSpecOutputs(dir);
  const standaloneSchemas = new Map([...outputs].filter(([file]) => file.startsWith('schemas/')).map(([file, text]) => [file.slice(8, -5), JSON.parse(text)]));
  return lintSignedExamples(dir, { openapi: JSON.parse(outputs.get('openapi.json')!), asyncapi: JSON.parse(outputs.get('asyncapi.json')!), standaloneSchemas }) as LintProblem[];
};

// The signature of a message's example, under components.messages.
const signatureOf = (text: string, message: string) => text.slice(text.indexOf(`    ${message}:`, text.indexOf('\ncomponents:'))).match(/X-Webhook-Signature: (\S+)/)![1]!;

describe('the example signatures', () => {
  let scratch: ScratchSpecs;
  afterEach(() => scratch?.remove());

  it('on main: every example is signed with examples/webhook-signing-key.pem, and signing again changes nothing', async () => {
    expect(await signedProblemsOf(specsDir)).toEqual([]);
    expect(await signExamples(specsDir, { check: true })).toEqual([]);
  });

  it('a signature copied from another message is refused at its line, and pnpm sign:examples signs it (layout kept)', async () => {
    scratch = createScratchSpecs();
    const before = readFileSync(join(scratch.dir, 'asyncapi.yaml'), 'utf8');
    const own = signatureOf(before, 'kycStatusChanged');
    const line = scratch.edit('asyncapi.yaml', own, signatureOf(before, 'userCreated'));
    const problems = await signedProblemsOf(scratch.dir);
    expect(problems.map((problem) => [problem.file, problem.rule, problem.line])).toEqual([['asyncapi.yaml', 'example-signature', line]]);
    expect(problems[0]!.message).toContain('kyc.status.changed message example');
    expect(problems[0]!.message).toContain('pnpm sign:examples');

    expect(await signExamples(scratch.dir)).toEqual(['asyncapi.yaml']);
    expect(readFileSync(join(scratch.dir, 'asyncapi.yaml'), 'utf8')).toBe(before);
    expect(await signedProblemsOf(scratch.dir)).toEqual([]);
  });

  it('an edited example body is refused until signed again; the new signature verifies with openssl', async () => {
    scratch = createScratchSpecs();
    scratch.edit('asyncapi.yaml', 'email: ada@example.com\n              phone: null', 'email: grace@example.com\n              phone: null');
    const problems = await signedProblemsOf(scratch.dir);
    // The WebhookHeaders schema's example is the headers of that delivery.
    expect(problems.map((problem) => [problem.file, problem.rule])).toEqual([['asyncapi.yaml', 'example-signature'], ['schemas/WebhookHeaders.yaml', 'example-signature']]);
    await signExamples(scratch.dir);
    expect(await signedProblemsOf(scratch.dir)).toEqual([]);
    const outputs = await buildSpecOutputs(scratch.dir);
    const example = JSON.parse(outputs.get('asyncapi.json')!).components.messages.userCreated.examples[0];
    expect(example.payload.data.email).toBe('grace@example.com');
    const { execFileSync } = await import('node:child_process');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(scratch.dir, 'signed'), `${example.headers['X-Webhook-Timestamp']}.${JSON.stringify(example.payload)}`);
    writeFileSync(join(scratch.dir, 'signature'), Buffer.from(example.headers['X-Webhook-Signature'], 'base64'));
    const publicKey = join(scratch.dir, 'public.pem');
    execFileSync('openssl', ['pkey', '-in', join(scratch.dir, 'examples', 'webhook-signing-key.pem'), '-pubout', '-out', publicKey]);
    const out = execFileSync('openssl', ['pkeyutl', '-verify', '-pubin', '-inkey', publicKey, '-rawin', '-in', join(scratch.dir, 'signed'), '-sigfile', join(scratch.dir, 'signature')], { encoding: 'utf8' });
    expect(out).toContain('Signature Verified Successfully');
  });

  it('a key example that is not the signing key\'s public half is refused, and signing writes the right one', async () => {
    scratch = createScratchSpecs();
    const text = readFileSync(join(scratch.dir, 'schemas', 'WebhookPublicKey.yaml'), 'utf8');
    const base64 = text.match(/-----BEGIN PUBLIC KEY-----\n\s+(\S+)/)![1]!;
    scratch.edit('schemas/WebhookPublicKey.yaml', base64, 'MCowBQYDK2VwAyEAO79BUImarWNjDX3BzhlEgeHAZ+QbfopaX8VaHd+TSJY=');
    const problems = await signedProblemsOf(scratch.dir);
    expect(problems.map((problem) => [problem.file, problem.rule])).toEqual([['schemas/WebhookPublicKey.yaml', 'example-key']]);
    expect(await signExamples(scratch.dir)).toEqual(['schemas/WebhookPublicKey.yaml']);
    expect(readFileSync(join(scratch.dir, 'schemas', 'WebhookPublicKey.yaml'), 'utf8')).toBe(text);
  });
});
