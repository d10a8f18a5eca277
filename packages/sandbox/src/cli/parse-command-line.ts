import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CliUsageError } from './cli-usage-error.js';

/**
 * The edit distance between two words (optimal string alignment: insertions, deletions,
 * substitutions and swaps of two neighbours each cost 1), so `--prot` is 1 from `--port`.
 */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The known words nearest to a mistyped one, when near enough to be what was meant: at most
 * 1 edit for a word of up to 4 letters, 2 up to 8, 3 beyond. Ties are all returned.
 *
 * @example
 * ```ts
 * closestWords('prot', ['port', 'host', 'users']); // ['port']
 * ```
 */
export function closestWords(word: string, known: readonly string[]): string[] {
  const allowed = word.length <= 4 ? 1 : word.length <= 8 ? 2 : 3;
  let best = allowed + 1;
  let nearest: string[] = [];
  for (const candidate of known) {
    const distance = editDistance(word, candidate);
    if (distance < best) {
      best = distance;
      nearest = [candidate];
    } else if (distance === best) nearest.push(candidate);
  }
  return nearest;
}

/** "did you mean --port?" / "did you mean --port or --host?", or nothing when nothing is near. */
export function didYouMean(word: string, known: readonly string[], prefix = ''): string {
  const nearest = closestWords(word, known);
  return nearest.length === 0 ? '' : ` Did you mean ${nearest.map((candidate) => prefix + candidate).join(' or ')}?`;
}

/** Flags every command line understands, anywhere on it (`capi-sandbox serve --help`): suggested for a mistyped flag. */
const GLOBAL_FLAGS = ['help', 'version'];

/**
 * node:util's parseArgs for one command, with the errors a person can act on: an unknown flag
 * says which known flag it is nearest to ("did you mean --port?") and shows the usage.
 */
export function parseCommandLine<const Options extends NonNullable<ParseArgsConfig['options']>, AllowPositionals extends boolean>(
  command: string,
  args: string[],
  options: Options,
  allowPositionals: AllowPositionals,
): ReturnType<typeof parseArgs<{ args: string[]; options: Options; strict: true; allowPositionals: AllowPositionals }>> {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals });
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const flag = /'(-[^']*)'/.exec(message)?.[1] ?? '';
      const name = flag.replace(/^-+/, '').split('=')[0]!;
      throw new CliUsageError(`Unknown flag ${flag} for ${command}.${didYouMean(name, [...Object.keys(options), ...GLOBAL_FLAGS], '--')}`, { showUsage: true });
    }
    throw new CliUsageError(message);
  }
}
