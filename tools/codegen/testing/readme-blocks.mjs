import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The fenced code blocks of `language` (` ```ts `, ` ```js `, ...) in a package's README.md, in
 * order, each without its fences: what the README tests compile or run.
 *
 * @param {string} packageDir absolute path of the package
 * @param {string} language the fence's language tag
 * @returns {string[]}
 * @example
 * const [quickStart] = readmeBlocks(packageDir, 'ts');
 */
export function readmeBlocks(packageDir, language) {
  const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
  return [...readme.matchAll(new RegExp(`\`\`\`${language}\n([^]*?)\`\`\``, 'g'))].map((match) => match[1] ?? '');
}
