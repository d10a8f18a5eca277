import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeReadmeExamples } from '@capi/codegen-kit/testing';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

describeReadmeExamples({
  packageDir,
  packageName: '@capi/webhook-signature',
  prelude: '',
  // The README's examples are JavaScript (Express, a Worker, signing in a test): checked as such.
  js: true,
  // The free name of the signWebhook example: the user the test sends as the event's data.
  jsPrelude: 'declare const user: Record<string, unknown>;\n',
  extraPaths: { express: [join(packageDir, 'node_modules/@types/express')] },
  // process.env and Express's Node request and response; the package's Node build (node:crypto).
  types: ['node'],
});
