import { defineConfig } from 'vitest/config';

// The generators parse specs and compile validators: seconds each on a shared machine.
export default defineConfig({ test: { testTimeout: 180_000, hookTimeout: 180_000 } });
