// @capi/webhook-signature, node build (the `node` export condition): the web build with the
// engine-bound functions overridden by node:crypto ones. Local exports shadow `export *`.
// Types and documentation are those of index.ts; `typeof web.x` keeps the signatures equal.
import { signEd25519With, verifyEd25519With } from './ed25519-message.js';
import type * as web from './index.js';
import { nodeEngine } from './node-engine.js';
import { signWebhookWith } from './sign-webhook.js';
import { isValidWebhookSignatureWith, verifyWebhookSignatureWith } from './verify-webhook.js';

export * from './index.js';

/** {@inheritDoc web.verifyWebhookSignature} */
export const verifyWebhookSignature: typeof web.verifyWebhookSignature = (options) => verifyWebhookSignatureWith(nodeEngine, options);
/** {@inheritDoc web.isValidWebhookSignature} */
export const isValidWebhookSignature: typeof web.isValidWebhookSignature = (options) => isValidWebhookSignatureWith(nodeEngine, options);
/** {@inheritDoc web.signWebhook} */
export const signWebhook: typeof web.signWebhook = (options) => signWebhookWith(nodeEngine, options);
/** {@inheritDoc web.signEd25519} */
export const signEd25519: typeof web.signEd25519 = (options) => signEd25519With(nodeEngine, options);
/** {@inheritDoc web.verifyEd25519} */
export const verifyEd25519: typeof web.verifyEd25519 = (options) => verifyEd25519With(nodeEngine, options);
