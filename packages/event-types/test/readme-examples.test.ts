import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeReadmeExamples } from '@capi/codegen-kit/testing';

describeReadmeExamples({
  packageDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  packageName: '@capi/event-types',
  // The free names the README's snippets stand for (a Request in a handler, a parsed body).
  prelude: 'declare const request: Request;\ndeclare const body: { eventType: unknown };\n',
});
