import { defineConfig } from 'vitest/config';

// These tests start node, parse specs or load WebAssembly: seconds on a shared machine.
export default defineConfig({ test: { testTimeout: 60_000, hookTimeout: 120_000 } });
