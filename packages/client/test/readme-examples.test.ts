import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeReadmeExamples } from '@capi/codegen-kit/testing';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const viemTypes = join(packageDir, 'node_modules/viem/_types');

describeReadmeExamples({
  packageDir,
  packageName: '@capi/client',
  // The free names the README's snippets stand for: a client made as in the quick start, the
  // sign-in parameters and signer of the user, the page's SIWE domain and URI, the base URL.
  prelude: [
    "import type { PartnerClient, SignInWithEthereumParams, SiweSigner } from '@capi/client';",
    'declare const client: PartnerClient;',
    'declare const params: SignInWithEthereumParams;',
    'declare const signer: SiweSigner;',
    'declare const domain: string;',
    'declare const uri: string;',
    'declare const baseUrl: string;',
    '',
  ].join('\n'),
  extraPaths: {
    '@capi/client/onboarding': [join(packageDir, 'src/onboarding.ts')],
    '@capi/client/siwe': [join(packageDir, 'src/siwe.ts')],
    viem: [join(viemTypes, 'index.d.ts')],
    'viem/*': [join(viemTypes, '*/index.d.ts')],
  },
  // process.env in the quick start (a server-side sign-in).
  types: ['node'],
});
