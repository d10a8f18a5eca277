/**
 * Reference 4.2 and 4.4 send the body with `Content-Type: application/json`, and the spec
 * answers any other type `415` (`UnsupportedMediaType`, an `x-assumption`): a partner who
 * forgets the header finds out here rather than in production. Parameters (`; charset=utf-8`)
 * are allowed and the type is compared case-insensitively. A request without a body is not
 * concerned (an empty body is answered as before).
 *
 * Returns the refusal's message, naming what was sent, or `undefined` when the body may be read.
 */
export function jsonContentTypeProblem(contentType: string | undefined, bodyLength: number): string | undefined {
  if (bodyLength === 0) return undefined;
  if (contentType === undefined || contentType.trim() === '') {
    return 'The body was sent without a Content-Type; send it as JSON with Content-Type: application/json.';
  }
  const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase();
  if (mediaType === 'application/json') return undefined;
  const shown = contentType.length > 100 ? `${contentType.slice(0, 100)}…` : contentType;
  return `The body was sent with Content-Type ${JSON.stringify(shown)}; send it as JSON with Content-Type: application/json.`;
}
