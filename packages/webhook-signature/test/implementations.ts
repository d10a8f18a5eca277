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

/** Awaits a promise that must reject with a WebhookSignatureError of `code`, and returns it. */
export async function rejectsWithCode(promise: Promise<unknown>, code: WebhookSignatureError['code']): Promise<WebhookSignatureError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(WebhookSignatureError);
  expect((error as WebhookSignatureError).code).toBe(code);
  return error as WebhookSignatureError;
}

/** Awaits a promise that must reject with a PublicKeyFetchError of `code`, and returns it. */
export async function rejectsWithFetchCode(promise: Promise<unknown>, code: PublicKeyFetchError['code']): Promise<PublicKeyFetchError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(PublicKeyFetchError);
  expect((error as PublicKeyFetchError).code).toBe(code);
  return error as PublicKeyFetchError;
}

export const hexToBytes = (hex: string): Uint8Array => new Uint8Array(Buffer.from(hex, 'hex'));
