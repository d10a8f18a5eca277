// Benchmarks of @capi/event-types. The package is types plus a few runtime values, so what
// matters is what it adds to a partner's bundle (min+gzip of the ESM build, whole and
// tree-shaken to one constant) and that isWebhookEventType costs no more than the obvious
// hand-written check, WEBHOOK_EVENT_TYPES.includes(value), measured in the same run.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { batchRatio, bundleSize, interleavedBatches, printTable, record } from '@capi/bench-kit';
import { WEBHOOK_EVENT_TYPES, isWebhookEventType } from '../dist/index.js';

const packageDir = resolve(fileURLToPath(import.meta.url), '..', '..');
const WHOLE_BUILD_GOAL_BYTES = 512;
const ONE_CONSTANT_GOAL_BYTES = 128;

// What a receiver sees: mostly known kinds, sometimes a kind added after this release.
const seen = [...WEBHOOK_EVENT_TYPES, 'card.transaction.updated', 'user.deleted', 'kyc.status.changed'];
let index = 0;
let sink = 0;
const next = () => seen[(index = (index + 1) % seen.length)];
const times = await interleavedBatches({
  guard: () => { if (isWebhookEventType(next())) sink++; },
  includes: () => { if (WEBHOOK_EVENT_TYPES.includes(next())) sink++; },
}, { rounds: 400, batch: 4096, warmupMs: 300 });
if (sink === 0) throw new Error('the benchmark loop was optimised away');
const result = batchRatio(times, 'guard', 'includes');
record({ name: 'isWebhookEventType checks/s', value: result.perSecond, unit: 'ops/s (fast decile)', baseline: 'WEBHOOK_EVENT_TYPES.includes', ratio: result.ratio });

const whole = await bundleSize(join(packageDir, 'dist/index.js'));
record({ name: 'ESM build, min+gzip', value: whole.gzipBytes, unit: 'bytes', goal: `<= ${WHOLE_BUILD_GOAL_BYTES}`, met: whole.gzipBytes <= WHOLE_BUILD_GOAL_BYTES });

const dir = mkdtempSync(join(tmpdir(), 'event-types-bench-'));
try {
  const entry = join(dir, 'entry.mjs');
  writeFileSync(entry, `import { WEBHOOK_SIGNATURE_HEADER } from ${JSON.stringify(join(packageDir, 'dist/index.js'))};\nconsole.log(WEBHOOK_SIGNATURE_HEADER);\n`);
  const oneConstant = await bundleSize(entry);
  const baselineEntry = join(dir, 'baseline.mjs');
  writeFileSync(baselineEntry, 'console.log("X-Webhook-Signature");\n');
  const baseline = await bundleSize(baselineEntry);
  const added = oneConstant.gzipBytes - baseline.gzipBytes;
  record({ name: 'one header constant, tree-shaken, min+gzip added', value: added, unit: 'bytes', baseline: 'the string literal inlined', goal: `<= ${ONE_CONSTANT_GOAL_BYTES}`, met: added <= ONE_CONSTANT_GOAL_BYTES });
} finally {
  rmSync(dir, { recursive: true, force: true });
}

printTable();
