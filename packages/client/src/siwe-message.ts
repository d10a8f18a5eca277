import { createSiweMessage } from 'viem/siwe';
import { InvalidArgumentError } from './errors.js';

/**
 * The fields of an EIP-4361 (SIWE) message as the service expects them.
 *
 * @example
 * const fields: SiweMessageFields = { address, chainId: 100, domain: 'localhost:3000', uri: 'http://localhost:3000', nonce };
 */
export interface SiweMessageFields {
  /** The signer's address (checksummed in the message whatever case is given). */
  address: string;
  /** EIP-155 chain id of the signer's wallet (100, Gnosis chain, in production). */
  chainId: number;
  /** RFC 3986 authority of the page asking for the signature, e.g. `app.example.com` or `localhost:3000`. */
  domain: string;
  /** The URI the sign-in is for, e.g. `https://app.example.com/login`. */
  uri: string;
  /** The nonce from `GET /api/v1/auth/nonce`. */
  nonce: string;
  /** A human-readable line shown by the wallet: letters, digits, spaces and `-._~:/?#[]@!$&'()*+,;=` only (EIP-4361), else `invalid_statement`. */
  statement?: string | undefined;
  /** Defaults to now. */
  issuedAt?: Date | undefined;
}

/**
 * Builds the EIP-4361 message to sign, with viem's SIWE utilities (version 1). Invalid fields
 * throw an {@link InvalidArgumentError} naming the field.
 *
 * @example
 * import { buildSiweMessage } from '@capi/client/siwe';
 * const message = buildSiweMessage({ address, chainId: 100, domain: 'app.example.com', uri: 'https://app.example.com', nonce });
 */
export function buildSiweMessage(fields: SiweMessageFields): string {
  // viem builds any single-line statement; the EIP-4361 grammar (and the siwe package a service
  // verifies with) takes only these characters, so a message with any other could be signed
  // and then only refused.
  const statement: unknown = fields.statement;
  const bad = typeof statement === 'string' ? /[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;= ]/u.exec(statement) : null;
  if (bad) {
    throw new InvalidArgumentError(
      'statement',
      `statement must be one line of the characters EIP-4361 allows (letters, digits, spaces and - . _ ~ : / ? # [ ] @ ! $ & ' ( ) * + , ; =): ${JSON.stringify(bad[0])} at position ${bad.index} is not one of them (no double quotes, %, line breaks or non-ASCII), and a service verifying SIWE would refuse the signed message. Rephrase the statement.`,
      'invalid_statement',
    );
  }
  try {
    return createSiweMessage({
      address: fields.address as `0x${string}`,
      chainId: fields.chainId,
      domain: fields.domain,
      uri: fields.uri,
      nonce: fields.nonce,
      statement: fields.statement,
      issuedAt: fields.issuedAt ?? new Date(),
      version: '1',
    });
  } catch (error) {
    const viemError = error as { name?: string; shortMessage?: string; message?: string; details?: string };
    const field = /field "?(\w+)"?/i.exec(viemError.shortMessage ?? viemError.message ?? '')?.[1] ?? (viemError.name === 'InvalidAddressError' ? 'address' : 'message');
    throw new InvalidArgumentError(
      field,
      `Cannot build the SIWE message: ${viemError.shortMessage ?? viemError.message ?? String(error)} (${field}). ${
        field === 'domain'
          ? `Use the page's host name with a dot (app.example.com) or localhost, with an optional port; viem's SIWE builder refuses an IP literal such as [::1] and a single-label host such as devbox (got ${JSON.stringify(fields.domain)}).`
          : 'See EIP-4361 for the format of each field.'
      }`,
      'invalid_siwe_field',
    );
  }
}
