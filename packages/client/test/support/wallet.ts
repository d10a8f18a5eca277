import { privateKeyToAccount } from 'viem/accounts';

// Well-known test keys (Hardhat/Anvil accounts 0 and 1): never funded anywhere that matters.
export const TEST_PRIVATE_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
export const registeredAccount = privateKeyToAccount(TEST_PRIVATE_KEY);
export const unregisteredAccount = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412e4603b6b78690d');

export const SIGN_IN_PAGE = { domain: 'localhost:3000', uri: 'http://localhost:3000/login', chainId: 100 } as const;
