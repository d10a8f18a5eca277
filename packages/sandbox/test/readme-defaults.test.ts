// The README's two tables of settings (the CLI flags of `capi-sandbox serve`, the options of
// startSandbox) state a default for each: this keeps those figures, and the list of flags, in
// step with the code and the usage that `--help` prints.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_CLI_PORT } from '../src/cli/serve-command.js';
import { USAGE } from '../src/cli/usage.js';
import { startSandbox, type Sandbox } from '../src/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The first cell (its first code span) and the second cell of each row of the table that follows `heading`. */
function tableAfter(heading: string): Map<string, string> {
  const start = readme.indexOf(heading);
  expect(start, `README heading ${heading}`).toBeGreaterThan(-1);
  const rows = new Map<string, string>();
  for (const line of readme.slice(start).split('\n').slice(1)) {
    if (line.startsWith('#')) break;
    const cells = line.split(/(?<!\\)\|/).map((cell) => cell.trim());
    const name = /^`([^`]+)`/.exec(cells[1] ?? '')?.[1];
    if (name !== undefined) rows.set(name.split(' ')[0]!, (cells[2] ?? '').replace(/`/g, ''));
  }
  return rows;
}

let sandbox: Sandbox;
let described: Record<string, unknown>;
beforeAll(async () => {
  sandbox = await startSandbox();
  described = (await (await fetch(`${sandbox.baseUrl}/__sandbox`)).json()) as Record<string, unknown>;
});
afterAll(() => sandbox.close());

it('the README states the defaults the CLI and startSandbox() have, for every flag --help lists', () => {
  const flags = tableAfter('### `capi-sandbox [serve] [options]`');
  const usageFlags = USAGE.slice(USAGE.indexOf('serve options:'), USAGE.indexOf('send-event:'))
    .split('\n')
    .flatMap((line) => /^ {2}(--[a-z-]+)/.exec(line)?.[1] ?? []);
  expect([...flags.keys()].sort()).toEqual(usageFlags.sort());
  expect(flags.get('--port')).toBe(String(DEFAULT_CLI_PORT));
  expect(flags.get('--host')).toBe(new URL(sandbox.baseUrl).hostname);
  expect(flags.get('--generation')).toBe(described.generation);
  expect(flags.get('--time-scale')).toBe(String(described.timeScale));
  expect(flags.get('--delivery-timeout')).toBe(String(described.deliveryTimeoutMs));
  expect(flags.get('--limit-sync-delay')).toBe(String(described.limitSyncDelayMs));
  expect(flags.get('--max-daily-limit')).toBe(String(described.maxDailyLimitCents));
  expect(flags.get('--migration-kyc-setup')).toBe(String(described.migrationKycSetupMs));

  const options = tableAfter('| option | default | meaning |');
  expect(options.get('host')).toBe(new URL(sandbox.baseUrl).hostname);
  expect(options.get('generation')).toBe(`'${String(described.generation)}'`);
  expect(options.get('timeScale')).toBe(String(described.timeScale));
  expect(options.get('deliveryTimeoutMs')).toBe(String(described.deliveryTimeoutMs));
  expect(options.get('limitSyncDelayMs')).toBe(String(described.limitSyncDelayMs));
  expect(options.get('maxDailyLimitCents')).toBe(String(described.maxDailyLimitCents));
  expect(options.get('migrationKycSetupMs')).toBe(String(described.migrationKycSetupMs));
  expect(options.get('requirePhone')).toBe(String(described.requirePhone));
});
