// Signed deliveries for the benchmarks: unique realistic user events, signed with node:crypto
// up front so that signing is never part of what is measured.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign } from 'node:crypto';

export function createKeys() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return {
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

function userEvent(index) {
  const id = `bench-user-${index}`;
  return JSON.stringify({
    eventType: 'kyc.status.changed',
    data: {
      id, email: `${id}@example.com`, phone: '+4915112345678', firstName: 'Ada', lastName: 'Lovelace',
      address1: '1 Main Street', address2: null, city: 'Berlin', postalCode: '10115', state: null,
      country: 'DE', nationalityCountry: 'DE',
      signInWallets: [{ address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' }],
      smartWallets: [{ address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', chainId: '100' }],
      kycStatus: 'approved', availableFeatures: { providerIban: true },
      cards: [{ id: `card-${index}`, cardToken: `tok-${index}`, lastFourDigits: '4242', embossedName: 'ADA LOVELACE', activatedAt: '2026-01-01T00:00:00Z', virtual: true }],
      bankingDetails: { providerIban: 'DE89370400440532013000', providerBic: 'COBADEFFXXX', providerIbanStatus: 'ASSIGNED', address: 'Berlin' },
      isSourceOfFundsAnswered: true, isPhoneValidated: true,
    },
  });
}

/**
 * `count` unique deliveries, of users `first` to `first + count - 1`: body (text and the bytes a
 * server reads), timestamp, signature (base64), and the signed message and signature bytes
 * already decoded.
 */
export function signDeliveries(privateKeyPem, count, first = 0) {
  const key = createPrivateKey(privateKeyPem);
  const timestamp = String(Math.floor(Date.now() / 1000));
  return Array.from({ length: count }, (_, index) => {
    const body = userEvent(first + index);
    const message = Buffer.from(`${timestamp}.${body}`, 'utf8');
    const signatureBytes = sign(null, message, key);
    return { body, bodyBytes: Buffer.from(body, 'utf8'), timestamp, signature: signatureBytes.toString('base64'), message, signatureBytes };
  });
}

export { createPublicKey };

/**
 * `count` unique deliveries of about `targetBytes` each: a `user.created` event whose user holds
 * enough cards to reach the size (the largest realistic body, at the receiver's 1 MiB limit).
 */
export function signLargeDeliveries(privateKeyPem, count, targetBytes) {
  const key = createPrivateKey(privateKeyPem);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const card = (index, user) => ({ id: `card-${user}-${index}`, cardToken: `tok-${user}-${index}`, lastFourDigits: '4242', embossedName: 'ADA LOVELACE', activatedAt: '2026-01-01T00:00:00Z', virtual: true });
  const cardsFor = Math.floor(targetBytes / JSON.stringify(card(100_000, 1_000)).length);
  return Array.from({ length: count }, (_, user) => {
    const event = JSON.parse(userEvent(user));
    event.eventType = 'user.created';
    event.data.cards = Array.from({ length: cardsFor }, (_, index) => card(index, user));
    const body = JSON.stringify(event);
    const message = Buffer.from(`${timestamp}.${body}`, 'utf8');
    return { body, bodyBytes: Buffer.from(body, 'utf8'), timestamp, signature: sign(null, message, key).toString('base64') };
  });
}
