import type { Writable } from 'node:stream';
import { version } from '../../package.json';
import { CliUsageError } from './cli-usage-error.js';
import { didYouMean } from './parse-command-line.js';
import { runSendEvent } from './send-event-command.js';
import { runServe } from './serve-command.js';
import { USAGE } from './usage.js';
import { SandboxConfigError } from '../errors.js';

export interface CliStreams {
  out: Writable;
  err: Writable;
}

const HELP = new Set(['--help', '-h', 'help']);
const VERSION = new Set(['--version', '-v', 'version']);
const COMMANDS = ['serve', 'send-event', 'help', 'version'];
/** The flags that answer wherever they stand on the command line: `capi-sandbox serve --port 4010 --help`. */
const HELP_FLAGS = new Set(['--help', '-h']);
const VERSION_FLAGS = new Set(['--version', '-v']);

/** The flags of a command line: its words up to `--`, after which every word is a positional. */
function flagWords(args: readonly string[]): readonly string[] {
  const end = args.indexOf('--');
  return end === -1 ? args : args.slice(0, end);
}

/**
 * Runs `capi-sandbox` with `args`; resolves to the process exit code: 0, 1 (a delivery that
 * did not succeed), 2 (an unusable command line: the message, and for an unknown flag or
 * command the usage, go to `err`).
 */
export async function runCli(args: string[], streams: CliStreams): Promise<number> {
  // `--help` (or `-h`) anywhere prints the usage, and `--version` (or `-v`) the version, whatever
  // else the line holds: `capi-sandbox serve --help` is a request for help, not an unknown flag.
  // There is one usage, for every command; given both, help wins.
  const flags = flagWords(args);
  if (flags.some((word) => HELP_FLAGS.has(word))) {
    streams.out.write(USAGE);
    return 0;
  }
  if (flags.some((word) => VERSION_FLAGS.has(word))) {
    streams.out.write(`${version}\n`);
    return 0;
  }
  // `serve` is the default command: `npx -p @capi/sandbox capi-sandbox` alone starts the sandbox with its
  // defaults, and `capi-sandbox --port 4010` is read as `capi-sandbox serve --port 4010`.
  const servesByDefault = args[0] === undefined || (args[0].startsWith('-') && !HELP.has(args[0]) && !VERSION.has(args[0]));
  const [command, ...rest] = servesByDefault ? ['serve', ...args] : args;
  try {
    switch (command) {
      case 'serve':
        return await runServe(rest, streams);
      case 'send-event':
        return await runSendEvent(rest, streams);
      case '--help':
      case '-h':
      case 'help':
        streams.out.write(USAGE);
        return 0;
      case '--version':
      case '-v':
      case 'version':
        streams.out.write(`${version}\n`);
        return 0;
      default:
        throw new CliUsageError(`Unknown command "${command}"; use "serve" or "send-event".${didYouMean(command!, COMMANDS)}`, { showUsage: true });
    }
  } catch (error) {
    if (error instanceof CliUsageError || error instanceof SandboxConfigError) {
      const showUsage = error instanceof CliUsageError && error.showUsage;
      streams.err.write(`capi-sandbox: ${error.message}\n${showUsage ? `\n${USAGE}` : 'Run "capi-sandbox --help" for the options.\n'}`);
      return 2;
    }
    throw error;
  }
}
