// Adapters from viem objects to the `signMessage` function sign-in needs. They only call
// methods on what they are given, so this module imports nothing from viem at run time.

import { InvalidArgumentError } from './errors.js';

/**
 * A message signer: EIP-191 `personal_sign` for an EOA, EIP-1271 for a smart account.
 *
 * @example
 * const signMessage: SignMessage = (message) => account.signMessage({ message });
 */
export type SignMessage = (message: string) => Promise<string>;

/**
 * The signer half of the sign-in parameters.
 *
 * @example
 * const signer: SiweSigner = signerFromViemAccount(account); // { address, signMessage }
 */
export interface SiweSigner {
  address: string;
  signMessage: SignMessage;
}

/**
 * Anything shaped like a viem account that can sign: a local account or a smart account.
 *
 * @example
 * const account: MessageSigningAccount = privateKeyToAccount(privateKey);
 */
export interface MessageSigningAccount {
  address: string;
  signMessage(parameters: { message: string }): Promise<string>;
}

/**
 * Anything shaped like a viem wallet client.
 *
 * @example
 * const walletClient: MessageSigningWalletClient = createWalletClient({ chain: gnosis, transport: custom(window.ethereum) });
 */
export interface MessageSigningWalletClient {
  account?: { address: string } | undefined;
  signMessage(parameters: { account: never; message: string }): Promise<string>;
}

/**
 * Makes the signer of a viem account (`privateKeyToAccount`, a smart account, ...).
 *
 * @example
 * const account = privateKeyToAccount(privateKey);
 * await client.signInWithEthereum({ ...signerFromViemAccount(account), domain, uri, chainId: 100 });
 */
export function signerFromViemAccount(account: MessageSigningAccount): SiweSigner {
  if (typeof account !== 'object' || account === null || typeof account.address !== 'string' || typeof account.signMessage !== 'function') {
    // Only the type is named: the value may be a private key passed by mistake.
    throw new InvalidArgumentError(
      'account',
      `signerFromViemAccount needs a viem account that can sign, such as privateKeyToAccount(privateKey) from viem/accounts; got ${account === null ? 'null' : typeof account}${typeof account === 'object' && account !== null ? ' without address and signMessage' : ''}.`,
      'invalid_signer',
    );
  }
  return { address: account.address, signMessage: (message) => account.signMessage({ message }) };
}

/**
 * Makes the signer of a viem wallet client (a browser wallet through `custom(window.ethereum)`),
 * for its own account or the `address` given.
 *
 * @example
 * const walletClient = createWalletClient({ chain: gnosis, transport: custom(window.ethereum) });
 * const [address] = await walletClient.requestAddresses();
 * await client.signInWithEthereum({ ...signerFromWalletClient(walletClient, address), domain, uri, chainId: 100 });
 */
export function signerFromWalletClient(walletClient: MessageSigningWalletClient, address?: string): SiweSigner {
  if (typeof walletClient !== 'object' || walletClient === null || typeof walletClient.signMessage !== 'function') {
    throw new InvalidArgumentError(
      'walletClient',
      'signerFromWalletClient needs a viem wallet client, such as createWalletClient({ chain, transport: custom(window.ethereum) }); for a local account use signerFromViemAccount(account).',
      'invalid_signer',
    );
  }
  const signerAddress = address ?? walletClient.account?.address;
  if (signerAddress === undefined) {
    throw new InvalidArgumentError(
      'address',
      'signerFromWalletClient needs an address when the wallet client has no account: pass the address from walletClient.requestAddresses().',
      'invalid_address',
    );
  }
  // The client's own (local) account signs in-process; a bare address goes to the wallet by RPC.
  const account = walletClient.account !== undefined && walletClient.account.address.toLowerCase() === signerAddress.toLowerCase() ? walletClient.account : signerAddress;
  return {
    address: signerAddress,
    signMessage: (message) => walletClient.signMessage({ account: account as never, message }),
  };
}
