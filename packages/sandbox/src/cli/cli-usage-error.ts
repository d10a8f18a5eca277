/** A command line the CLI cannot run; the message says what to type instead. */
export class CliUsageError extends Error {
  override readonly name: string = 'CliUsageError';
}
