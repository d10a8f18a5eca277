// The README's examples as a partner runs them: the code of the block, taken from README.md,
// run in a plain Node process against the built package.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { transform } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { packageDir } from '../scripts/generate.mjs';
import userCreatedEvent from './fixtures/user-created-event.json' with { type: 'json' };

const run = promisify(execFile);
const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
const tsBlocks = [...readme.matchAll(/```ts\n([^]*?)```/g)].map((match) => match[1] ?? '');

describe('the README example of @capi/webhook-validator/schemas runs as shown', () => {
  it('compiles the exported schemas with ajv (Ajv2020) and validates a user.created event', async () => {
    const example = tsBlocks.find((block) => block.includes("from '@capi/webhook-validator/schemas'"));
    expect(example).toBeDefined();
    const { code } = await transform(`${example!}
      const event = ${JSON.stringify(userCreatedEvent)};
      const verdicts = [validateUserCreated(event)];
      verdicts.push(validateUserCreated({ ...event, data: { ...event.data, kycStatus: 'verified' } }), validateUserCreated.errors?.[0]?.instancePath);
      console.log(JSON.stringify(verdicts));
    `, { loader: 'ts', format: 'esm' });
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code], { cwd: packageDir });
    expect(JSON.parse(stdout)).toEqual([true, false, '/data/kycStatus']);
  });
});
