/**
 * Machine-readable reasons a sandbox cannot start or an option is unusable.
 *
 * @example
 * ```ts
 * const code: SandboxConfigErrorCode = 'invalid_users_file';
 * ```
 */
export type SandboxConfigErrorCode =
  | 'invalid_option'
  | 'invalid_users_file'
  | 'invalid_user';

/**
 * Thrown when the sandbox is given an option, a users file, a user, or an `advanceClock`, `setWebhookKeySuccess`, `whenDeliveriesSettled` or `oneTimePasswords` value it cannot use.
 * The message names the option and says what to pass instead.
 *
 * @example
 * ```ts
 * try { await startSandbox({ timeScale: 0 }); }
 * catch (error) { if (error instanceof SandboxConfigError) console.error(error.code, error.message); }
 * ```
 */
export class SandboxConfigError extends Error {
  override readonly name = 'SandboxConfigError';
  constructor(
    readonly code: SandboxConfigErrorCode,
    message: string,
  ) {
    super(message);
  }
}
