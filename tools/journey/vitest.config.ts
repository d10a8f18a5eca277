import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real servers over loopback: a generous per-test budget, no timing assertions.
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
});
