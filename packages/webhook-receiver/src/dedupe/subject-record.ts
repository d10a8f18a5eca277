import type { DedupeClaim } from './dedupe-store.js';

/**
 * What a store keeps per subject (`<eventType>:<data.id>`): the latest processed body's digest,
 * or a claim in progress. The transitions below are the store contract of {@link DedupeStore}
 * for one subject; the memory store and the Durable Object store apply them (each atomically in
 * its own way), the Redis store in Lua.
 *
 * A claim that is released (its handler failed) or that expires (its process died) leaves the
 * subject with no processed record, not the one before: an event of the subject was received
 * and not handled, so the next delivery of the subject is dispatched whatever its body. Were the
 * record before restored, a newer event that repeats it (A, then B fails, then A again before
 * B's retry) would be taken for a retry of A and never dispatched.
 */
export interface SubjectRecord {
  state: 'processing' | 'processed';
  token: string;
  /** Digest of the body processed (or being processed) for this subject. */
  digest: string;
  expiresAt: number;
}

/**
 * A claim of the subject by a delivery whose body has `digest`, at time `at`. `record` is the
 * record to keep afterwards (the same object when nothing changed).
 */
export function claimSubject(
  record: SubjectRecord | undefined,
  digest: string,
  at: number,
  claimTtlMs: number,
  tokenId: string,
): { claim: DedupeClaim; record: SubjectRecord } {
  // The latest processed body of the subject: a retry of it. A claim in progress: wait. A
  // different body (or an expired record, or an expired claim): a new event for this subject.
  if (record !== undefined && record.expiresAt > at && (record.state === 'processing' || record.digest === digest)) {
    return { claim: { state: record.state }, record };
  }
  const token = `${tokenId}:${digest}`;
  return { claim: { state: 'claimed', token }, record: { state: 'processing', token, digest, expiresAt: at + claimTtlMs } };
}

/** The record after `markProcessed(key, token)`: unchanged when another delivery took the expired claim over. */
export function markSubjectProcessed(record: SubjectRecord | undefined, key: string, token: string, at: number, ttlMs: number): SubjectRecord {
  if (record !== undefined && record.token !== token && record.expiresAt > at) return record;
  return { state: 'processed', token, digest: digestOfToken(token, key), expiresAt: at + ttlMs };
}

/** The record after `release(key, token)`: none while the claim is still this token's (see {@link SubjectRecord}). */
export function releaseSubject(record: SubjectRecord | undefined, token: string): SubjectRecord | undefined {
  return record?.token === token ? undefined : record;
}

/** Tokens are `<id>:<digest>`: markProcessed learns the digest even after the record was evicted. */
function digestOfToken(token: string, key: string): string {
  const at = token.indexOf(':');
  return at === -1 ? key : token.slice(at + 1);
}
