/**
 * The two Ed25519 operations that differ per runtime: WebCrypto everywhere (web-engine),
 * node:crypto's synchronous one-shot calls on Node (node-engine). Everything else is shared.
 */
export interface Ed25519Engine {
  verify(publicKey: CryptoKey, signature: Uint8Array<ArrayBuffer>, message: Uint8Array<ArrayBuffer>): boolean | Promise<boolean>;
  sign(privateKey: CryptoKey, message: Uint8Array<ArrayBuffer>): Uint8Array | Promise<Uint8Array>;
}
