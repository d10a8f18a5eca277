import { verifyMessage, type Address, type Hex } from 'viem';
import { ApiError } from '../http/api-error.js';

/**
 * Checks an EIP-1271 (smart account) signature, for example with
 * `publicClient.verifyMessage` of viem against a chain. Resolve `true` when the contract at
 * `address` accepts `signature` for `message`.
 *
 * @example
 * ```ts
 * const client = createPublicClient({ chain: gnosis, transport: http() });
 * const verifySmartAccountSignature: SmartAccountSignatureVerifier = (input) =>
 *   client.verifyMessage({ address: input.address, message: input.message, signature: input.signature });
 * ```
 */
// The address and signature are spelled as viem's `Address` and `Hex` are (`0x${string}`), so
// that this public type does not import viem: CommonJS consumers under moduleResolution node16
// cannot load viem's ESM-only types (TS1479).
export type SmartAccountSignatureVerifier = (input: {
  address: `0x${string}`;
  message: string;
  signature: `0x${string}`;
  chainId: number;
}) => Promise<boolean> | boolean;

/** How a signature was accepted. */
export type SignatureKind = 'eoa' | 'eip1271';

/**
 * Verifies the SIWE signature: first as an EOA `personal_sign` signature (viem
 * `verifyMessage`), then, if a smart-account verifier is configured, through EIP-1271.
 */
export async function verifySiweSignature(
  input: { address: Address; message: string; signature: string; chainId: number },
  verifySmartAccountSignature: SmartAccountSignatureVerifier | undefined,
): Promise<SignatureKind | undefined> {
  if (!/^0x[0-9a-fA-F]*$/.test(input.signature)) return undefined;
  const signature = input.signature as Hex;
  try {
    if (await verifyMessage({ address: input.address, message: input.message, signature })) return 'eoa';
  } catch {
    // A signature of the wrong length cannot be an EOA signature; it may still be EIP-1271.
  }
  if (!verifySmartAccountSignature) return undefined;
  let accepted: boolean;
  try {
    accepted = await verifySmartAccountSignature({ ...input, signature });
  } catch (error) {
    // The partner's verifier (typically a chain call) failed: the signature is not accepted,
    // and the answer says why instead of a 500 that blames the sandbox. Whoever signed in gets
    // that answer, so it carries the error's first line with each URL cut to its origin: an RPC
    // URL holds its API key in the path or query (viem's errors quote it, and the request body).
    throw new ApiError(401, {
      error: `The EIP-1271 verifier (verifySmartAccountSignature) failed for ${input.address}: ${publicReason(error)}; the signature was not accepted.`,
    });
  }
  return accepted ? 'eip1271' : undefined;
}

/** The first line of a verifier's error (viem's `shortMessage` when it has one), each URL in it cut to its origin. */
function publicReason(error: unknown): string {
  const text = (error as { shortMessage?: unknown })?.shortMessage ?? (error as Error)?.message ?? String(error);
  const firstLine = String(text).split('\n', 1)[0]!.slice(0, 300);
  return firstLine.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, (url) => (URL.canParse(url) && new URL(url).origin !== 'null' ? `${new URL(url).origin}/…` : '<url>'));
}
