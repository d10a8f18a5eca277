import { defineConfig } from 'vitest/config';

// One runtime after the other: each spawns a runtime and a sandbox shares the machine's 2 cores.
export default defineConfig({ test: { fileParallelism: false, testTimeout: 120_000, hookTimeout: 300_000 } });
