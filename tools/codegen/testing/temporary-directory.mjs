import { mkdtempSync, rmSync } from 'node:fs';
import { onTestFinished } from 'vitest';

/**
 * A fresh temporary directory, removed when the current test finishes.
 *
 * @param {string} prefix absolute path prefix, e.g. `join(tmpdir(), 'openapi-types-')`
 * @returns {string}
 * @example
 * const dir = temporaryDirectory(join(tmpdir(), 'event-types-readme-'));
 */
export function temporaryDirectory(prefix) {
  const dir = mkdtempSync(prefix);
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
