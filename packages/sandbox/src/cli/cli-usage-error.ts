/**
 * A command line the CLI cannot run; the message says what to type instead. With
 * `showUsage`, the CLI prints the whole usage after it (an unknown flag or command).
 */
export class CliUsageError extends Error {
  override readonly name: string = 'CliUsageError';
  readonly showUsage: boolean;

  constructor(message: string, options: { showUsage?: boolean } = {}) {
    super(message);
    this.showUsage = options.showUsage ?? false;
  }
}
