import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describePublishedPackage } from '@capi/codegen-kit/testing';
import { expect } from 'vitest';

describePublishedPackage({
  packageDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  packageName: '@capi/openapi-types',
  entry: {
    gives: 'load the (types-only) entry without side effects',
    expect: (entry) => expect(Object.keys(entry)).toEqual([]),
  },
});
