#!/usr/bin/env node
// Reads the log of `pnpm test` (turbo running every package's vitest) and prints one
// closing line, `N passed, N failed` (plus skipped), summed over all packages, so that a
// CI run says in one place how many tests ran. When a test failed, it then repeats each
// failure vitest reported (package, file, test name and the first lines of the error), so
// the end of a long CI log names what failed. Exits 1 when the log shows no test at all.
import { readFileSync } from 'node:fs';

const ERROR_LINES = 8;
const log = readFileSync(process.argv[2], 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
const totals = { passed: 0, failed: 0, skipped: 0 };
let suites = 0;
const failures = [];
const lines = log.split('\n');
for (const [index, line] of lines.entries()) {
  // vitest's summary: "      Tests  3 failed | 120 passed | 1 skipped (124)"
  const summary = /\bTests\s{2,}(.+)\(\d+\)\s*$/.exec(line);
  if (summary) {
    suites += 1;
    for (const [, count, kind] of summary[1].matchAll(/(\d+) (passed|failed|skipped)/g)) totals[kind] += Number(count);
    continue;
  }
  // vitest's failure heading, behind turbo's prefix: "@capi/x:test:  FAIL  test/a.test.ts > a > b"
  const failure = /^(?:(\S+):\s)?\s*FAIL\s+(.+)$/.exec(line);
  if (!failure) continue;
  const [, task = '', title] = failure;
  const detail = [];
  for (const next of lines.slice(index + 1)) {
    if (detail.length === ERROR_LINES) break;
    const text = (task && next.startsWith(`${task}:`) ? next.slice(task.length + 1) : next).trim();
    if (/^FAIL\s/.test(text) || /^⎯{3,}/.test(text)) break;
    if (text) detail.push(text);
  }
  failures.push({ task, title, detail });
}
if (suites === 0) {
  console.error('summarize-tests: no vitest summary found in the log: no test ran');
  process.exit(1);
}
console.log(`test suites: ${suites}`);
console.log(`${totals.passed} passed, ${totals.failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ''}`);
// A FAIL heading counts only when a summary counted a failure: test output may print one.
for (const { task, title, detail } of totals.failed ? failures : []) {
  console.log(`\nfailed: ${task ? `${task} ` : ''}${title}`);
  for (const text of detail) console.log(`  ${text}`);
}
