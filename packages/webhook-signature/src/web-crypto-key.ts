/**
 * A WebCrypto `CryptoKey`, described by the members this package reads, so that its types
 * compile in Node projects without the DOM lib as well as in browser projects. Every real
 * `CryptoKey` fits, and the keys this package returns are real `CryptoKey`s.
 *
 * @example
 * ```ts
 * const key: WebCryptoKey = await importPublicKey(pem);
 * console.log(key.type, key.algorithm.name); // "public" "Ed25519"
 * ```
 */
export interface WebCryptoKey {
  readonly type: 'public' | 'private' | 'secret';
  readonly algorithm: { readonly name: string };
  readonly extractable: boolean;
  readonly usages: readonly string[];
}
