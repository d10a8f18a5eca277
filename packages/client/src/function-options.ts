import { InvalidArgumentError } from './errors.js';

/**
 * Throws unless each of `names` in `options` is absent (`undefined`) or a function: "`name` must
 * be a function`returning`." (code `invalid_option`). Shared by `createPartnerClient` and the
 * TokenManager, which keeps the main entry within its size budget.
 *
 * @example
 * assertFunctionOptions(options, ['fetch', 'onRetry'], ''); // 'fetch must be a function.'
 * assertFunctionOptions(options, ['refresh'], ' returning a Promise of tokens');
 */
export function assertFunctionOptions<Options extends object>(options: Options, names: readonly (keyof Options & string)[], returning: string): void {
  for (const name of names) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw new InvalidArgumentError(name, `${name} must be a function${returning}.`, 'invalid_option');
    }
  }
}
