// Benchmark of @capi/openapi-types: the package is types only, so the one figure is what
// importing it adds to a partner's bundle (min+gzip of the ESM build): nothing.
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleSize, printTable, record } from '@capi/bench-kit';

const packageDir = resolve(fileURLToPath(import.meta.url), '..', '..');
const { minBytes } = await bundleSize(join(packageDir, 'dist/index.js'));
record({ name: 'ESM build, minified', value: minBytes, unit: 'bytes', goal: '0 (types only)', met: minBytes === 0 });
printTable();
