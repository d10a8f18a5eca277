// @capi/bench-kit: the shared measuring tools behind `pnpm bench`.
// Timings are only ever reported as ratios against a baseline measured in the same run,
// because absolute numbers on shared 2-core machines are noise.
import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';
import { performance } from 'node:perf_hooks';

/**
 * Bundles `entry` with esbuild (ESM, minified, tree-shaken) and returns the minified and
 * the minified+gzipped size in bytes. `external` names modules left out of the bundle.
 */
export async function bundleSize(entry, { platform = 'browser', conditions = [], external = [] } = {}) {
  const result = await build({
    entryPoints: [entry], bundle: true, minify: true, format: 'esm', write: false,
    platform, conditions, external, logLevel: 'silent', metafile: false,
  });
  const code = result.outputFiles[0].contents;
  return { minBytes: code.byteLength, gzipBytes: gzipSync(code, { level: 9 }).byteLength };
}

/**
 * Times `contenders` (name -> sync or async function) in `rounds` interleaved rounds: each round
 * times one batch of `batch` calls of every contender, in an order shuffled afresh each round
 * (seeded, so runs are repeatable), so that no contender always follows the same one: what runs
 * before a batch (a WebCrypto call on the thread pool, a burst of garbage) changes the caches it
 * starts with, and a fixed or merely rotated order would charge that to the same contender every
 * time. Thousands of batches of a few milliseconds: a disturbance (another process, a frequency
 * change, a garbage collection) spoils a few batches of whichever contender it hits, not a long
 * round. `beforeBatch(name)` runs untimed before each batch (to prepare its inputs); garbage is
 * collected every `gcEvery` rounds, untimed, when `collectGarbage` is given. An `async` function
 * is awaited on every call; a plain function is called in a plain loop, so that a synchronous
 * baseline pays no promise tick it would not pay in real code.
 * Returns, per contender, the microseconds per call of each round's batch.
 */
export async function interleavedBatches(contenders, { rounds = 2_000, batch = 8, warmupMs = 1_000, gcEvery = 50, collectGarbage, beforeBatch } = {}) {
  const names = Object.keys(contenders);
  const times = Object.fromEntries(names.map((name) => [name, []]));
  const runBatch = Object.fromEntries(names.map((name) => {
    const fn = contenders[name];
    return [name, fn.constructor.name === 'AsyncFunction'
      ? async () => { for (let i = 0; i < batch; i++) await fn(); }
      : () => { for (let i = 0; i < batch; i++) fn(); }];
  }));
  const warmUntil = performance.now() + warmupMs;
  while (performance.now() < warmUntil) {
    for (const name of names) {
      beforeBatch?.(name);
      await runBatch[name]();
    }
  }
  const random = seededRandom(0x5eed);
  const order = [...names];
  for (let round = 0; round < rounds; round++) {
    if (collectGarbage && round % gcEvery === 0) collectGarbage();
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (const name of order) {
      beforeBatch?.(name);
      const start = performance.now();
      await runBatch[name]();
      times[name].push(((performance.now() - start) * 1000) / batch);
    }
  }
  return times;
}

/** mulberry32: a small seeded PRNG, so that the shuffled orders are the same in every run. */
function seededRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Summarises `interleavedBatches` times of `name` against `baseline`. The ratio (speed of `name`
 * over speed of `baseline`) compares fast-decile batch times: noise on a shared machine only ever
 * slows a batch down, so each contender's fast batches estimate its own cost best (Chen & Revels,
 * "Robust benchmarking in noisy environments", 2016; the minimum estimator of Julia's
 * BenchmarkTools). `medianRatio` is the median of the per-round ratios, noise included, and
 * `medianPerSecond` the speed of `name` from its median batch.
 */
export function batchRatio(times, name, baseline) {
  const fast = (values) => percentile(values, 10);
  return {
    perSecond: 1e6 / fast(times[name]),
    baselinePerSecond: 1e6 / fast(times[baseline]),
    ratio: fast(times[baseline]) / fast(times[name]),
    medianRatio: percentile(times[name].map((time, round) => times[baseline][round] / time), 50),
    medianPerSecond: 1e6 / percentile(times[name], 50),
  };
}

/** Percentile (0..100) of an array of numbers. */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const rows = [];

/**
 * Records one figure. `value` in `unit`; optional `baseline` name and `ratio`; `goal` is a
 * human-readable target such as ">= 0.95". Printed as a `BENCH {json}` line that
 * tools/bench/run.mjs collects into the final table.
 */
export function record(row) {
  rows.push(row);
  console.log(`BENCH ${JSON.stringify(row)}`);
}

/** Prints the rows recorded so far as a table (used when a package bench runs alone). */
export function printTable(list = rows) {
  console.log(formatTable(list));
}

export function formatTable(list) {
  const fmt = (v) => (typeof v === 'number' ? (Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(2)) : (v ?? ''));
  const header = ['package', 'figure', 'value', 'unit', 'baseline', 'ratio', 'goal', 'met'];
  const body = list.map((r) => [r.package ?? '', r.name, fmt(r.value), r.unit, r.baseline ?? '', r.ratio === undefined ? '' : r.ratio.toFixed(3), r.goal ?? '', r.met === undefined ? '' : r.met ? 'yes' : 'NO']);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => String(row[i]).length)));
  const line = (cells) => cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...body.map(line)].join('\n');
}
