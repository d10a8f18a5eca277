// Every behaviour is checked on both builds: the web entry (WebCrypto) and the node entry
// (node:crypto fast path), imported from source exactly as the export conditions pick them.
import { expect } from 'vitest';
import * as nodeBuild from '../src/node.js';
import * as webBuild from '../src/index.js';
import { PublicKeyFetchError, WebhookSignatureError } from '../src/index.js';

export type Api = typeof webBuild;

export const implementations: [string, Api][] = [
  ['node', nodeBuild],
  ['web', webBuild],
];

/** Awaits a promise that must reject with an instance of `type` whose `code` is `code`, and returns it. */
async function rejectsWith<E extends Error & { code: string }>(promise: Promise<unknown>, type: new (...args: never[]) => E, code: E['code']): Promise<E> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(type);
  expect((error as E).code).toBe(code);
  return error as E;
}

export const rejectsWithCode = (promise: Promise<unknown>, code: WebhookSignatureError['code']) =>
  rejectsWith(promise, WebhookSignatureError, code);

export const rejectsWithFetchCode = (promise: Promise<unknown>, code: PublicKeyFetchError['code']) =>
  rejectsWith(promise, PublicKeyFetchError, code);

export const hexToBytes = (hex: string): Uint8Array => new Uint8Array(Buffer.from(hex, 'hex'));
