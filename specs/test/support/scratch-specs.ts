// A throw-away copy of the specs, to seed violations without touching the real files.
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const specsDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const SOURCES = ['openapi.yaml', 'asyncapi.yaml', 'schemas', 'examples', '.spectral.yaml', 'spectral', 'redocly.yaml', 'package.json'];

export interface ScratchSpecs {
  dir: string;
  /** Replaces `search` (which must occur exactly once) in `file`; returns the 1-based line of the replacement. */
  edit(file: string, search: string, replacement: string): number;
  write(file: string, text: string): void;
  remove(): void;
}

/** Copies the spec sources to a temp dir; node_modules is linked so the lint scripts resolve. */
export function createScratchSpecs(): ScratchSpecs {
  const dir = mkdtempSync(join(tmpdir(), 'capi-specs-test-'));
  for (const source of SOURCES) cpSync(join(specsDir, source), join(dir, source), { recursive: true });
  symlinkSync(join(specsDir, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return {
    dir,
    edit(file, search, replacement) {
      const path = join(dir, file);
      const text = readFileSync(path, 'utf8');
      const at = text.indexOf(search);
      if (at < 0 || text.indexOf(search, at + 1) >= 0) throw new Error(`${file}: "${search}" must occur exactly once`);
      writeFileSync(path, text.slice(0, at) + replacement + text.slice(at + search.length));
      return text.slice(0, at).split('\n').length;
    },
    write(file, text) {
      writeFileSync(join(dir, file), text);
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
