// Only the bundle sizes of bench/index.mjs, without the request-rate rounds: `node bench/size.mjs`.
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { bundleSize, printTable, record } from '@capi/bench-kit';

const here = dirname(fileURLToPath(import.meta.url));
const main = await bundleSize(join(here, '../dist/index.js'), { external: ['viem', 'viem/*', './sign-in-*', './webhook-public-key-*', './limit-sync-*', './renewal-errors-*', './limit-errors-*', './request-errors-*'] });
record({ name: 'main entry min+gzip, without the lazy sign-in, webhook-key, limit-sync, renewal-error, limit-error and request-error chunks (openapi-fetch included)', value: main.gzipBytes, unit: 'bytes', goal: '<= 10240', met: main.gzipBytes <= 10_240 });
const withSignIn = await bundleSize(join(here, '../dist/index.js'), { external: ['viem', 'viem/*'] });
record({ name: 'main entry min+gzip, with the lazy chunks (viem excluded)', value: withSignIn.gzipBytes, unit: 'bytes' });
const onboarding = await bundleSize(join(here, '../dist/onboarding.js'), { external: ['viem', 'viem/*'] });
record({ name: '@capi/client/onboarding min+gzip (with the client code it shares with the main entry)', value: onboarding.gzipBytes, unit: 'bytes' });
// What the onboarding entry adds to an app that has the main entry, lazy chunks included on both sides.
const both = await bundleSize(join(here, 'main-and-onboarding.mjs'), { external: ['viem', 'viem/*'] });
record({ name: '  what @capi/client/onboarding adds to an app with the main entry (both with their lazy chunks)', value: both.gzipBytes - withSignIn.gzipBytes, unit: 'bytes' });
printTable();
