import { describe, expect, it } from 'vitest';
import { batchRatio, interleavedBatches } from '../index.mjs';

describe('interleavedBatches', () => {
  it('times one batch of every contender per round, after its beforeBatch, in calls of the batch size', async () => {
    const calls: string[] = [];
    const prepared: string[] = [];
    const contender = (name: string) => () => {
      calls.push(name);
    };
    const times = await interleavedBatches(
      { a: contender('a'), b: contender('b'), c: contender('c') },
      { rounds: 30, batch: 4, warmupMs: 0, beforeBatch: (name: string) => prepared.push(name) },
    );
    for (const name of ['a', 'b', 'c']) {
      expect(times[name]).toHaveLength(30);
      expect(times[name].every((microseconds: number) => microseconds >= 0)).toBe(true);
      expect(calls.filter((call) => call === name)).toHaveLength(30 * 4);
    }
    // One beforeBatch per batch, and each batch's calls come right after it.
    expect(prepared).toHaveLength(90);
    expect(calls.filter((_, index) => index % 4 === 0)).toEqual(prepared);
  });

  it('shuffles the order afresh each round, the same way in every run', async () => {
    const orderOfRun = async () => {
      const firsts: string[] = [];
      const noop = (name: string) => () => {
        firsts.push(name);
      };
      await interleavedBatches({ a: noop('a'), b: noop('b'), c: noop('c'), d: noop('d') }, { rounds: 40, batch: 1, warmupMs: 0 });
      return firsts;
    };
    const first = await orderOfRun();
    expect(await orderOfRun()).toEqual(first);
    // Each contender is preceded by more than one other contender across the rounds.
    const predecessors = new Map<string, Set<string>>();
    first.forEach((name, index) => {
      if (index === 0) return;
      if (!predecessors.has(name)) predecessors.set(name, new Set());
      predecessors.get(name)!.add(first[index - 1]!);
    });
    for (const name of ['a', 'b', 'c', 'd']) expect(predecessors.get(name)!.size).toBeGreaterThan(1);
  });

  it('awaits async contenders and calls plain ones in a plain loop, without awaiting what they return', async () => {
    let plainCalls = 0;
    let awaitedCalls = 0;
    const times = await interleavedBatches({
      // Awaiting this would never finish: a plain function is not awaited.
      plain: () => { plainCalls++; return new Promise(() => {}); },
      awaited: async () => { await new Promise((resolve) => setTimeout(resolve, 1)); awaitedCalls++; },
    }, { rounds: 2, batch: 3, warmupMs: 0 });
    expect(plainCalls).toBe(6);
    expect(awaitedCalls).toBe(6);
    expect(times.plain).toHaveLength(2);
  });

  it('collects garbage every gcEvery rounds, outside the batches', async () => {
    let collections = 0;
    await interleavedBatches({ a: () => undefined }, { rounds: 10, batch: 1, warmupMs: 0, gcEvery: 5, collectGarbage: () => collections++ });
    expect(collections).toBe(2);
  });
});

describe('batchRatio', () => {
  it('compares fast-decile times and reports the median of the per-round ratios', () => {
    // Twenty rounds: the candidate takes twice the baseline's time, with noise that only slows down.
    const baseline = Array.from({ length: 20 }, (_, round) => 100 + (round % 5) * 40);
    const candidate = baseline.map((time, round) => 2 * time + (round % 2) * 30);
    const result = batchRatio({ candidate, baseline }, 'candidate', 'baseline');
    expect(result.ratio).toBeCloseTo(0.5, 5);
    expect(result.perSecond).toBeCloseTo(1e6 / 200, 5);
    expect(result.baselinePerSecond).toBeCloseTo(1e6 / 100, 5);
    expect(result.medianRatio).toBeGreaterThan(0.4);
    expect(result.medianRatio).toBeLessThanOrEqual(0.5);
    // The candidate's median batch: 360 µs (the 10th of its 20 sorted times).
    expect(result.medianPerSecond).toBeCloseTo(1e6 / 360, 5);
  });
});
