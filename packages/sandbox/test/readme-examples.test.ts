import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeReadmeExamples } from '@capi/codegen-kit/testing';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const viemTypes = join(packageDir, 'node_modules/viem/_types');

describeReadmeExamples({
  packageDir,
  packageName: '@capi/sandbox',
  // The free names of "Driving it from tests": the test's wallet (a viem account) and the URL
  // of the webhook receiver under test.
  prelude: "import type { PrivateKeyAccount } from 'viem/accounts';\ndeclare const account: PrivateKeyAccount;\ndeclare const receiverUrl: string;\n",
  extraPaths: {
    '@capi/sandbox/dev-wallet': [join(packageDir, 'src/dev-wallet.ts')],
    viem: [join(viemTypes, 'index.d.ts')],
    'viem/*': [join(viemTypes, '*/index.d.ts')],
    vitest: [join(packageDir, 'node_modules/vitest')],
  },
  // The sandbox's own source is a Node server (node:http, node:crypto).
  types: ['node'],
});
