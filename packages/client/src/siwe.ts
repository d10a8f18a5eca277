// `@capi/client/siwe`: the part of the client that needs viem. The main entry loads it lazily
// from signInWithEthereum, so apps that never sign in never download viem.
export { buildSiweMessage, type SiweMessageFields } from './siwe-message.js';
