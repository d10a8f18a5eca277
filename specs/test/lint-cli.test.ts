// `pnpm lint:specs` is the first gate of the review workflow: a broken spec must fail it,
// and the output must say where (file and line) and what to do.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createScratchSpecs, specsDir } from './support/scratch-specs';

describe('a broken spec fails `pnpm lint:specs` with file and line', () => {
  it('exits 1 and prints `file:line:column severity tool/rule message` for each problem', () => {
    const scratch = createScratchSpecs();
    try {
      const line = scratch.edit('schemas/Card.yaml', '  cardToken:\n    type: string\n    description: Card token.\n', '  card_token:\n    type: string\n');
      const run = spawnSync(process.execPath, [join(specsDir, 'scripts', 'lint.mjs'), scratch.dir], { encoding: 'utf8', env: { ...process.env, REDOCLY_TELEMETRY: 'off' } });
      expect(run.status).toBe(1);
      expect(run.stdout).toMatch(new RegExp(`schemas/Card.yaml:${line}:\\d+ error spectral/capi-camel-case-properties Property "card_token" is not camelCase`));
      expect(run.stdout).toMatch(new RegExp(`schemas/Card.yaml:${line}:\\d+ error spectral/capi-property-description Property "card_token" has no description`));
      expect(run.stdout).toMatch(/specs lint: [1-9]\d* errors, \d+ warnings/);
    } finally {
      scratch.remove();
    }
  }, 120_000);
});
