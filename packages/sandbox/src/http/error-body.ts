/**
 * The spec's ErrorBody: every field optional, because the live service is not uniform
 * (`{error}`, `{message}`, `{code, message}`). The sandbox uses each shape where the
 * live service does, so that clients are exercised against all three:
 * - older-generation `/api/v1` authentication: `{ error }` for 401, `{ message }` for 422;
 * - the firewall and the domain whitelist (403), the newer-generation `/user-api` and the
 *   sandbox's own `/__sandbox` endpoints: `{ code, message }`.
 */
export interface ErrorBody {
  error?: string;
  message?: string;
  code?: string;
}
