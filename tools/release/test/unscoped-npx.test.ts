import { describe, expect, it } from 'vitest';
import { unscopedNpxCommands, unscopedNpxInRepository } from '../src/unscoped-npx.mjs';
import { repoRoot } from '../src/workspace-packages.mjs';

// Built from parts, so that this file does not itself contain the command it looks for.
const bare = ['npx', 'capi-sandbox'].join(' ');
const withFlag = ['npx', '--yes', 'capi-sandbox'].join(' ');

describe('never tells users to run our bins through npx by their bare, unscoped name', () => {
  it('finds no such command in any committed file (docs, READMEs, changesets, sources)', () => {
    expect(unscopedNpxInRepository(repoRoot)).toEqual([]);
  });

  it('finds a seeded bare command, with or without npx flags, and says what to write', () => {
    const seeded = `Run:\n\n    ${bare} serve\n\nor ${withFlag} send-event`;
    expect(unscopedNpxCommands(seeded)).toEqual([
      { line: 3, command: bare, fix: 'npx -p @capi/sandbox capi-sandbox' },
      { line: 5, command: withFlag, fix: 'npx -p @capi/sandbox capi-sandbox' },
    ]);
  });

  it('accepts the scoped form', () => {
    expect(unscopedNpxCommands('npx -p @capi/sandbox capi-sandbox serve --port 4010')).toEqual([]);
  });
});
