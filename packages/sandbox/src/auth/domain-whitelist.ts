/**
 * The SIWE domains the sandbox accepts: the configured ones plus `localhost` with or
 * without a port (reference 5, rule 3). A configured domain without a port matches any
 * port; one with a port matches only that port.
 */
export class DomainWhitelist {
  readonly #entries: string[];

  constructor(domains: readonly string[]) {
    this.#entries = domains.map((domain) => domain.trim().toLowerCase()).filter(Boolean);
  }

  get domains(): readonly string[] {
    return this.#entries;
  }

  allows(domain: string): boolean {
    const normalised = domain.toLowerCase();
    const host = hostOf(normalised);
    if (host === 'localhost') return true;
    return this.#entries.some((entry) => (entry.includes(':') ? entry === normalised : entry === host));
  }
}

/** The host of an RFC 3986 authority (`host[:port]`, user info dropped, IPv6 brackets kept). */
export function hostOf(authority: string): string {
  const withoutUser = authority.slice(authority.lastIndexOf('@') + 1);
  if (withoutUser.startsWith('[')) return withoutUser.slice(0, withoutUser.indexOf(']') + 1);
  const colon = withoutUser.indexOf(':');
  return colon === -1 ? withoutUser : withoutUser.slice(0, colon);
}
