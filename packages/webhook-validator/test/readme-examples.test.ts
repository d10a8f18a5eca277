// The README's examples as a partner runs them: the code of the block, taken from README.md,
// run in a plain Node process against the built package.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describeReadmeExamples, readmeBlocks } from '@capi/codegen-kit/testing';
import { transform } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { packageDir } from '../scripts/generate.mjs';
import userCreatedEvent from './fixtures/user-created-event.json' with { type: 'json' };

const run = promisify(execFile);
const tsBlocks = readmeBlocks(packageDir, 'ts');

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

// Every ts block type-checks against the package as a partner's code would, with a bundler and
// with tsc under node16 (where `import Ajv2020 from 'ajv/dist/2020.js'` is not constructable).
describeReadmeExamples({
  packageDir,
  packageName: '@capi/webhook-validator',
  // The free name of "The result": the event type the result narrows to.
  prelude: "import type { WebhookEvent } from '@capi/event-types';\n",
  extraPaths: {
    '@capi/webhook-validator/schemas': [join(packageDir, 'src/schemas.ts')],
    '@capi/event-types': [join(packageDir, 'node_modules/@capi/event-types')],
    // The Example's signature check: a package of its own, not a dependency of this one.
    '@capi/webhook-signature': [join(packageDir, '../webhook-signature/src/index.ts')],
    'ajv/*': [join(packageDir, 'node_modules/ajv/*')],
  },
  // process.env in the Example.
  types: ['node'],
});
