import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeReadmeExamples } from '@capi/codegen-kit/testing';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

describeReadmeExamples({
  packageDir,
  packageName: '@capi/openapi-types',
  // The free name the README's snippets stand for (the token from signing in).
  prelude: 'declare const accessToken: string;\n',
  extraPaths: { 'openapi-fetch': [join(packageDir, 'node_modules/openapi-fetch')] },
});
