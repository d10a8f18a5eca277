import { expect, it } from 'vitest';
import type { DeadLetterEntry, DeadLetterStore } from '../../src/dead-letter/dead-letter-store.js';

/** Makes a fresh, empty dead-letter store (or a promise of one); `maxEntries` only for a store that takes it. */
export type DeadLetterStoreFactory = (options: { maxEntries?: number }) => DeadLetterStore | Promise<DeadLetterStore>;

/** A dead letter of digest `digest` received at `receivedAt`, as the receiver keeps an event the schema refused. */
export function deadLetterEntry(digest: string, receivedAt: number, rawBody: Uint8Array = new TextEncoder().encode(`{"n":"${digest}"}`)): DeadLetterEntry {
  return {
    bodySha256: digest,
    rawBody,
    timestamp: 1_700_000_000,
    signature: 'c2lnbmF0dXJl',
    receivedAt,
    errors: [{ path: '/data/kycStatus', keyword: 'enum', message: '/data/kycStatus must be one of: ...' }],
    reason: 'invalid_event',
  };
}

/**
 * The contract of put, list and delete, the same for every store; call it inside a describe
 * (with {@link describeDeadLetterReplaceContract} for a store that has `replace`).
 */
export function describeDeadLetterStoreContract(createStore: DeadLetterStoreFactory): void {
  it('lists what was put, oldest first, byte for byte (also bytes that are not UTF-8)', async () => {
    const store = await createStore({});
    const notUtf8 = new Uint8Array([0xff, 0xfe, 0x00, 0x7b]);
    await store.put(deadLetterEntry('b', 2_000));
    await store.put(deadLetterEntry('a', 1_000, notUtf8));
    await store.put(deadLetterEntry('c', 3_000));
    const listed = await store.list(10);
    expect(listed.map((kept) => kept.bodySha256)).toEqual(['a', 'b', 'c']);
    expect([...listed[0]!.rawBody]).toEqual([...notUtf8]);
    expect(listed[1]).toEqual({ ...deadLetterEntry('b', 2_000), rawBody: expect.any(Uint8Array) });
    expect(new TextDecoder().decode(listed[1]!.rawBody)).toBe('{"n":"b"}');
    expect((await store.list(2)).map((kept) => kept.bodySha256)).toEqual(['a', 'b']);
  });

  it('keeps why an entry was kept: a valid event whose handlers failed after an early 202 (handler_failed) comes back as such', async () => {
    const store = await createStore({});
    await store.put({ ...deadLetterEntry('a', 1_000), errors: [], reason: 'handler_failed' });
    await store.put(deadLetterEntry('b', 2_000));
    expect((await store.list(10)).map((kept) => [kept.bodySha256, kept.reason, kept.errors.length])).toEqual([['a', 'handler_failed', 0], ['b', 'invalid_event', 1]]);
  });

  it('keeps one entry per body digest: a redelivery of the same body leaves the first entry as it is, every field', async () => {
    const store = await createStore({});
    await store.put(deadLetterEntry('a', 1_000));
    await store.put(deadLetterEntry('b', 2_000));
    await store.put({ ...deadLetterEntry('a', 5_000), timestamp: 1_700_000_060, signature: 'bGF0ZXI=', errors: [], reason: 'handler_failed' });
    const listed = await store.list(10);
    expect(listed.map((kept) => kept.bodySha256)).toEqual(['a', 'b']);
    expect({ ...listed[0]!, rawBody: [...listed[0]!.rawBody] }).toEqual({ ...deadLetterEntry('a', 1_000), rawBody: [...deadLetterEntry('a', 1_000).rawBody] });
  });

  it('forgets a deleted entry and ignores an unknown digest', async () => {
    const store = await createStore({});
    await store.put(deadLetterEntry('a', 1_000));
    await store.put(deadLetterEntry('b', 2_000));
    await store.delete('a');
    await store.delete('never-kept');
    expect((await store.list(10)).map((kept) => kept.bodySha256)).toEqual(['b']);
  });
}

/**
 * The contract of {@link DeadLetterStore.replace}, the same for every store that has it; call it
 * inside a describe. `bounded`: the store takes `maxEntries`, and a replacement must not count
 * as a new entry against it.
 */
export function describeDeadLetterReplaceContract(createStore: DeadLetterStoreFactory, { bounded }: { bounded: boolean }): void {
  it('replace keeps the later entry in its own place (A -> B -> A lists B, A), every field as given', async () => {
    const store = await createStore({});
    await store.put(deadLetterEntry('a', 1_000));
    await store.put(deadLetterEntry('b', 2_000));
    const notUtf8 = new Uint8Array([0xff, 0xfe, 0x00, 0x7b]);
    const later: DeadLetterEntry = { ...deadLetterEntry('a', 3_000, notUtf8), timestamp: 1_700_000_060, signature: 'bGF0ZXI=', errors: [], reason: 'handler_failed' };
    await store.replace!(later);
    const listed = await store.list(10);
    expect(listed.map((kept) => kept.bodySha256)).toEqual(['b', 'a']);
    expect({ ...listed[1]!, rawBody: [...listed[1]!.rawBody] }).toEqual({ ...later, rawBody: [...notUtf8] });
    // One entry per digest still: the earlier one is gone, not listed twice.
    expect(listed).toHaveLength(2);
  });

  it('replace of a digest not kept keeps it as put does, in its place', async () => {
    const store = await createStore({});
    await store.put(deadLetterEntry('b', 2_000));
    await store.replace!({ ...deadLetterEntry('a', 1_000), reason: 'in_flight', errors: [] });
    expect((await store.list(10)).map((kept) => [kept.bodySha256, kept.reason])).toEqual([['a', 'in_flight'], ['b', 'invalid_event']]);
  });

  if (bounded) {
    it('replace counts toward maxEntries as one entry: a full store replaces a kept digest, and refuses a new one leaving every entry as it was', async () => {
      const store = await createStore({ maxEntries: 2 });
      await store.put(deadLetterEntry('a', 1_000));
      await store.put(deadLetterEntry('b', 2_000));
      await store.replace!(deadLetterEntry('a', 3_000));
      await expect(Promise.resolve().then(() => store.replace!(deadLetterEntry('c', 4_000)))).rejects.toMatchObject({ name: 'DeadLetterStoreError', code: 'dead_letter_store_full' });
      expect((await store.list(10)).map((kept) => [kept.bodySha256, kept.receivedAt])).toEqual([['b', 2_000], ['a', 3_000]]);
    });
  }
}
