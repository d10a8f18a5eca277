import { privateKeyToAccount, generatePrivateKey, type PrivateKeyAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { callOperation } from './sandbox-api.js';

export function newAccount(): PrivateKeyAccount {
  return privateKeyToAccount(generatePrivateKey());
}

export async function getNonce(baseUrl: string): Promise<string> {
  const { status, body } = await callOperation<string>(baseUrl, 'getNonce');
  if (status !== 200) throw new Error(`nonce: ${status}`);
  return body;
}

/** A SIWE message as a partner's front end builds it (EIP-4361, Gnosis chain by default). */
export function siweMessage(account: { address: `0x${string}` }, nonce: string, overrides: Partial<Parameters<typeof createSiweMessage>[0]> = {}): string {
  return createSiweMessage({
    address: account.address,
    chainId: 100,
    domain: 'localhost:3000',
    uri: 'http://localhost:3000',
    version: '1',
    nonce,
    statement: 'Sign in with Ethereum to the app.',
    issuedAt: new Date(),
    ...overrides,
  });
}

/** The whole flow: nonce, sign, challenge. Returns the challenge's answer. */
export async function signIn(
  baseUrl: string,
  account: PrivateKeyAccount,
  options: { ttlInSeconds?: number; domain?: string; uri?: string } = {},
) {
  const nonce = await getNonce(baseUrl);
  const message = siweMessage(account, nonce, {
    ...(options.domain ? { domain: options.domain } : {}),
    ...(options.uri ? { uri: options.uri } : {}),
  });
  const signature = await account.signMessage({ message });
  return callOperation(baseUrl, 'verifySiweSignature', { body: { message, signature, ttlInSeconds: options.ttlInSeconds ?? 3600 } });
}

/** Signs in and returns the token, failing loudly if sign-in did not succeed. */
export async function tokenFor(baseUrl: string, account: PrivateKeyAccount): Promise<string> {
  const response = await signIn(baseUrl, account);
  if (response.status !== 200) throw new Error(`sign-in failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.token;
}
