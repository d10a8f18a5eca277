/**
 * What differs per runtime: WebCrypto and atob/TextEncoder everywhere (web-engine),
 * node:crypto's one-shot calls and Buffer on Node (node-engine: synchronous, but a large
 * message is verified on the thread pool). Everything else is shared.
 */
export interface Ed25519Engine {
  verify(publicKey: CryptoKey, signature: Uint8Array<ArrayBuffer>, message: Uint8Array<ArrayBuffer>): boolean | Promise<boolean>;
  sign(privateKey: CryptoKey, message: Uint8Array<ArrayBuffer>): Uint8Array | Promise<Uint8Array>;
  /** The signed message: UTF-8 bytes of `${timestamp}.${body}`. */
  message(timestamp: string, body: string | Uint8Array): Uint8Array<ArrayBuffer>;
  /** The bytes of base64 text already checked to be a signature's one spelling. */
  base64(text: string): Uint8Array<ArrayBuffer>;
}
