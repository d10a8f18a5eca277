import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/*.test.ts'],
    // The machine is shared: generous limits, so that a loaded moment never fails a test.
    testTimeout: 60_000,
  },
});
