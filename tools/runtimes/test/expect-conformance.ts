import { expect } from 'vitest';

/** What every runtime must answer, whatever runs the suite (see conformance/suite.mjs). */
export function expectConformance(results: Record<string, any>, sandboxPublicKey: string): void {
  expect(results.signature).toEqual({
    verifies: 'resolved',
    verifiesBytes: 'resolved',
    deterministic: true,
    tamperedBody: 'invalid_signature',
    otherKey: 'invalid_signature',
    tooOld: 'timestamp_too_old',
    missingSignature: 'missing_signature',
    zeroKey: 'invalid_public_key',
    isValidFalse: false,
  });
  expect(results.validator).toEqual({
    valid: true,
    badEnum: { ok: false, paths: ['/data/kycStatus'] },
    missingField: false,
    unknownEventType: true,
    eventTypes: expect.any(Number),
    isKnown: true,
    isUnknown: false,
  });
  expect(results.validator.eventTypes).toBeGreaterThan(0);
  expect(results.client).toEqual({
    signedIn: true,
    limitAmount: expect.any(Number),
    publicKey: sandboxPublicKey,
    unauthenticated: 'AuthenticationError 401',
  });
  expectReceived(results.receive);
  // The same on the transactional store (createTransactionalDedupeStore).
  expectReceived(results.receiveTransactional);
}

/** What `receiveChecks` must see on every runtime and store. */
export function expectReceived(receive: { replies: Record<string, string>; dispatched: string[]; reported: string[] }): void {
  // A -> B -> A: three dispatches; the retry of the latest (re-signed) none; a forgery refused.
  expect(receive.replies).toEqual({
    first: '200 processed',
    second: '200 processed',
    third: '200 processed',
    retryOfLatest: '200 duplicate',
    forged: '401 invalid_signature',
  });
  expect(receive.dispatched).toEqual(['pending', 'resubmissionRequested', 'pending']);
  // The forgery's 401 is reported once: a wrong key looks the same.
  expect(receive.reported).toEqual(['signatures_rejected invalid_signature']);
}

/**
 * acknowledgeEarly served by the runtime's own server without waitUntil (Node, Bun, Deno): a
 * long-lived process keeps the handlers running after the 202, so both events are acknowledged
 * early and handled, and nothing is reported.
 */
export function expectEarlyAcknowledgement(early: { replies: string[]; dispatched: string[]; reported: string[] }): void {
  expect(early).toEqual({ replies: ['202 acknowledged', '202 acknowledged'], dispatched: ['pending', 'approved'], reported: [] });
}
