#!/usr/bin/env node
// Reads the log of `pnpm test` (turbo running every package's vitest) and prints one
// closing line, `N passed, N failed` (plus skipped), summed over all packages, so that a
// CI run says in one place how many tests ran. Exits 1 when the log shows no test at all.
import { readFileSync } from 'node:fs';

const log = readFileSync(process.argv[2], 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
const totals = { passed: 0, failed: 0, skipped: 0 };
let suites = 0;
for (const line of log.split('\n')) {
  // vitest's summary: "      Tests  3 failed | 120 passed | 1 skipped (124)"
  const summary = /\bTests\s{2,}(.+)\(\d+\)\s*$/.exec(line);
  if (!summary) continue;
  suites += 1;
  for (const [, count, kind] of summary[1].matchAll(/(\d+) (passed|failed|skipped)/g)) totals[kind] += Number(count);
}
if (suites === 0) {
  console.error('summarize-tests: no vitest summary found in the log: no test ran');
  process.exit(1);
}
console.log(`test suites: ${suites}`);
console.log(`${totals.passed} passed, ${totals.failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ''}`);
