import { getAddress, keccak256, toHex } from 'viem';

/** A checksummed address derived from a label, for wallets that need no key (a smart account). */
export function derivedAddressFor(label: string): `0x${string}` {
  return getAddress(`0x${keccak256(toHex(label)).slice(-40)}`);
}
