import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Spectral, Redocly and the AsyncAPI parser each take seconds on a shared, busy machine;
    // the default 5 s would fail on load, not on a real problem.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
