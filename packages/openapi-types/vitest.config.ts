import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // openapi-typescript, tsc and attw each take seconds on a shared 2-core box.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    typecheck: { include: ['test/**/*.test-d.ts'] },
  },
});
