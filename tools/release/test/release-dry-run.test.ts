import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerStep } from '../src/consumer-project.mjs';
import { startLocalRegistry, type LocalRegistry } from '../src/local-registry.mjs';
import { publishToRegistry, versionWithChangesets } from '../src/release-dry-run.mjs';
import { resolveWorkspaceRange, resolveWorkspaceRanges } from '../src/workspace-ranges.mjs';
import { writeFixturePackage } from './fixture-package';

let scratch: string;
let registry: LocalRegistry;
beforeAll(async () => {
  scratch = mkdtempSync(path.join(tmpdir(), 'capi-release-test-'));
  registry = await startLocalRegistry(path.join(scratch, 'registry'));
});
afterAll(async () => {
  await registry?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A consumer that takes @capi from the local registry only. */
function consumer(name: string, dependencies: Record<string, string>) {
  const dir = path.join(scratch, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true, dependencies }));
  writeFileSync(path.join(dir, '.npmrc'), `@capi:registry=${registry.url}\n`);
  return dir;
}

describe('publishes to a local verdaccio and installs from it with plain npm', () => {
  it('serves a published package to a fresh consumer, importable and requirable', async () => {
    const pkg = writeFixturePackage('@capi/fixture-greeter');
    try {
      const published = await publishToRegistry([{ name: '@capi/fixture-greeter', dir: pkg.dir }], registry, pkg.dir);
      expect(published).toEqual([{ name: '@capi/fixture-greeter', version: '1.0.0' }]);
    } finally {
      pkg.remove();
    }
    const dir = consumer('greeter-consumer', { '@capi/fixture-greeter': '1.0.0' });
    await consumerStep('npm install', 'npm', ['install', '--no-audit', '--no-fund'], dir);
    const esm = execFileSync(process.execPath, ['--input-type=module', '-e', "import { greet } from '@capi/fixture-greeter'; console.log(greet('esm'))"], { cwd: dir, encoding: 'utf8' });
    const cjs = execFileSync(process.execPath, ['-e', "console.log(require('@capi/fixture-greeter').greet('cjs'))"], { cwd: dir, encoding: 'utf8' });
    expect([esm.trim(), cjs.trim()]).toEqual(['hello esm', 'hello cjs']);
  }, 120_000);
});

describe('has no uplink: the consumer gets @capi packages from the local registry only', () => {
  it('fails to install an @capi package that was not published locally, with npm naming it', async () => {
    const dir = consumer('missing-consumer', { '@capi/never-published': '1.0.0' });
    await expect(consumerStep('npm install', 'npm', ['install', '--no-audit', '--no-fund'], dir)).rejects.toThrow(/npm install failed[\s\S]*(404|E404)[\s\S]*never-published/);
  }, 120_000);
});

describe('fails a release whose package leaves its build out of the tarball', () => {
  it('publishes, then the consumer cannot load it and the step says which', async () => {
    const pkg = writeFixturePackage('@capi/fixture-hollow', 'dist-not-published');
    try {
      await publishToRegistry([{ name: '@capi/fixture-hollow', dir: pkg.dir }], registry, pkg.dir);
    } finally {
      pkg.remove();
    }
    const dir = consumer('hollow-consumer', { '@capi/fixture-hollow': '1.0.0' });
    await consumerStep('npm install', 'npm', ['install', '--no-audit', '--no-fund'], dir);
    // npm always packs the "main" file (the CJS build), so the ESM build is what goes missing.
    writeFileSync(path.join(dir, 'consumer.mjs'), "import { greet } from '@capi/fixture-hollow';\nconsole.log(greet('esm'));\n");
    await expect(consumerStep('run consumer.mjs', process.execPath, ['consumer.mjs'], dir)).rejects.toThrow(/run consumer\.mjs failed[\s\S]*(Cannot find module|ERR_MODULE_NOT_FOUND)/);
  }, 120_000);
});

describe('versions with changesets on a copy only', () => {
  it('refuses to run changeset version outside the temp folder', async () => {
    // The repository itself, wherever it is cloned (CI clones may sit under the temp folder).
    await expect(versionWithChangesets(path.resolve('.'))).rejects.toThrow(/Refusing to run changeset version outside the temp folder/);
    await expect(versionWithChangesets(path.resolve('../..'))).rejects.toThrow(/Refusing to run changeset version outside the temp folder/);
    // Any other temp folder that release:dry did not make.
    const stranger = mkdtempSync(path.join(tmpdir(), 'capi-not-a-release-'));
    try {
      await expect(versionWithChangesets(path.join(stranger, 'repo'))).rejects.toThrow(/not a copy made by release:dry/);
    } finally {
      rmSync(stranger, { recursive: true, force: true });
    }
  });
});

describe('replaces workspace: ranges the way pnpm publish does', () => {
  it('maps ^, ~, * and explicit ranges', () => {
    expect(resolveWorkspaceRange('workspace:^', '1.2.3')).toBe('^1.2.3');
    expect(resolveWorkspaceRange('workspace:~', '1.2.3')).toBe('~1.2.3');
    expect(resolveWorkspaceRange('workspace:*', '1.2.3')).toBe('1.2.3');
    expect(resolveWorkspaceRange('workspace:^1.0.0', '1.2.3')).toBe('^1.0.0');
  });

  it('rejects a workspace: dependency on a package that is not in the workspace', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'capi-ranges-'));
    try {
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: '@capi/a', version: '1.0.0', dependencies: { '@capi/gone': 'workspace:^' } }));
      expect(() => resolveWorkspaceRanges([dir])).toThrow(/@capi\/a depends on @capi\/gone@workspace:\^, which is not in the workspace/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
