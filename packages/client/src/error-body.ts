// The live service is not uniform about error bodies: `{error}`, `{message}`, `{code, message}`
// and plain text all occur (service-facts.md). This reads whichever is there.

/**
 * What the service said about a failure, whatever shape its body had.
 *
 * @example
 * const { message, code }: ErrorBodySummary = readErrorBody(body);
 */
export interface ErrorBodySummary {
  /** The service's human-readable explanation, if any. */
  message?: string;
  /** The service's machine-readable code (for example `WAFForbidden`), if any. */
  code?: string;
}

const MAX_MESSAGE_LENGTH = 500;

/**
 * Reads `message` and `code` from an error body of any of the service's shapes.
 *
 * @example
 * readErrorBody({ code: 'WAFForbidden', message: 'Blocked' }) // { code: 'WAFForbidden', message: 'Blocked' }
 * readErrorBody('upstream timeout') // { message: 'upstream timeout' }
 */
export function readErrorBody(body: unknown): ErrorBodySummary {
  if (typeof body === 'string') {
    const text = body.trim();
    return text ? { message: truncate(text) } : {};
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return {};
  const record = body as Record<string, unknown>;
  const summary: ErrorBodySummary = {};
  const nested = typeof record.error === 'object' && record.error !== null ? (record.error as Record<string, unknown>) : undefined;
  const message = firstString(record.message, record.error, nested?.message, record.detail, record.title);
  const code = firstString(record.code, nested?.code);
  if (message) summary.message = truncate(message);
  if (code) summary.code = code;
  return summary;
}

function firstString(...candidates: unknown[]): string | undefined {
  for (const candidate of candidates) {
    if (typeof candidate === 'string' && candidate.trim()) return candidate.trim();
  }
  return undefined;
}

function truncate(text: string): string {
  return text.length > MAX_MESSAGE_LENGTH ? `${text.slice(0, MAX_MESSAGE_LENGTH)}…` : text;
}
