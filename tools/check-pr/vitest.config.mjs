import { defineConfig } from 'vitest/config';

// Each gate test runs git, redocly or a scratch clone: seconds each, more on a shared machine.
export default defineConfig({ test: { testTimeout: 60_000, hookTimeout: 120_000 } });
