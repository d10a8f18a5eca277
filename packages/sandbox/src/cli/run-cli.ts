import type { Writable } from 'node:stream';
import { CliUsageError } from './cli-usage-error.js';
import { runSendEvent } from './send-event-command.js';
import { runServe } from './serve-command.js';
import { USAGE } from './usage.js';
import { SandboxConfigError } from '../errors.js';

export interface CliStreams {
  out: Writable;
  err: Writable;
}

/** Runs `capi-sandbox` with `args`; resolves to the process exit code. */
export async function runCli(args: string[], streams: CliStreams): Promise<number> {
  const [command, ...rest] = args;
  try {
    switch (command) {
      case 'serve':
        return await runServe(rest, streams);
      case 'send-event':
        return await runSendEvent(rest, streams);
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        streams.out.write(USAGE);
        return command === undefined ? 1 : 0;
      default:
        throw new CliUsageError(`Unknown command "${command}"; use "serve" or "send-event".`);
    }
  } catch (error) {
    if (error instanceof CliUsageError || error instanceof SandboxConfigError) {
      streams.err.write(`capi-sandbox: ${error.message}\nRun "capi-sandbox --help" for the options.\n`);
      return 2;
    }
    throw error;
  }
}
