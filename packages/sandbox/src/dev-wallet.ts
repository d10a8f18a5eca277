/**
 * A well-known development wallet (the first account of Anvil and Hardhat), seeded as a
 * user when no users are given, so that `capi-sandbox serve` can be signed in to at once.
 * Its private key is public: never use it for anything of value.
 *
 * Also its own entry, `@capi/sandbox/dev-wallet`, with nothing else in it: a browser app (or
 * any bundle) can import it without the sandbox's Node server.
 *
 * @example
 * ```ts
 * const account = privateKeyToAccount(DEV_WALLET.privateKey); // viem/accounts
 * ```
 */
export const DEV_WALLET = {
  address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
  privateKey: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
} as const;
