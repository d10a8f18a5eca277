import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real servers, real child processes (Prism, the CLI): generous per-test budget, no timing assertions.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
