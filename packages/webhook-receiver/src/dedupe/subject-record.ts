import type { DedupeClaim } from './dedupe-store.js';

/**
 * What a store keeps per subject (`<eventType>:<data.id>`): the latest processed body's digest,
 * or a claim in progress with the processed record it replaces. The transitions below are the
 * store contract of {@link DedupeStore} for one subject; the memory store and the Durable
 * Object store apply them (each atomically in its own way), the Redis store in Lua.
 */
export interface SubjectRecord {
  state: 'processing' | 'processed';
  token: string;
  /** Digest of the body processed (or being processed) for this subject. */
  digest: string;
  expiresAt: number;
  /** While processing: the processed record it replaces, restored if the claim is released. */
  previous?: { digest: string; expiresAt: number } | undefined;
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
): { claim: DedupeClaim; record: SubjectRecord | undefined } {
  let previous: SubjectRecord['previous'];
  if (record !== undefined) {
    if (record.expiresAt > at) {
      if (record.state === 'processing' || record.digest === digest) return { claim: { state: record.state }, record };
      // A different body than the latest processed one: a new event for this subject.
      previous = { digest: record.digest, expiresAt: record.expiresAt };
    } else if (record.state === 'processing' && record.previous !== undefined && record.previous.expiresAt > at) {
      // An expired claim (its process died) falls back to the record it replaced.
      if (record.previous.digest === digest) {
        return { claim: { state: 'processed' }, record: { state: 'processed', token: record.token, digest, expiresAt: record.previous.expiresAt } };
      }
      previous = record.previous;
    }
  }
  const token = `${tokenId}:${digest}`;
  return { claim: { state: 'claimed', token }, record: { state: 'processing', token, digest, expiresAt: at + claimTtlMs, previous } };
}

/** The record after `markProcessed(key, token)`: unchanged when another delivery took the expired claim over. */
export function markSubjectProcessed(record: SubjectRecord | undefined, key: string, token: string, at: number, ttlMs: number): SubjectRecord {
  if (record !== undefined && record.token !== token && record.expiresAt > at) return record;
  return { state: 'processed', token, digest: digestOfToken(token, key), expiresAt: at + ttlMs };
}

/** The record after `release(key, token)`: the processed record the claim replaced, or none. */
export function releaseSubject(record: SubjectRecord | undefined, token: string, at: number): SubjectRecord | undefined {
  if (record?.token !== token) return record;
  // The latest processed event of the subject is still the one before this failed claim.
  if (record.previous !== undefined && record.previous.expiresAt > at) {
    return { state: 'processed', token, digest: record.previous.digest, expiresAt: record.previous.expiresAt };
  }
  return undefined;
}

/** Tokens are `<id>:<digest>`: markProcessed learns the digest even after the record was evicted. */
function digestOfToken(token: string, key: string): string {
  const at = token.indexOf(':');
  return at === -1 ? key : token.slice(at + 1);
}
