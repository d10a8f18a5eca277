import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Two cores shared by several suites: generous limits, never asserted timings.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Type tests (*.test-d.ts, checked by tsc): raw's types for every operation.
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'] },
  },
});
