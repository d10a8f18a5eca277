#!/usr/bin/env node
import { runCli } from './cli/run-cli.js';

runCli(process.argv.slice(2), { out: process.stdout, err: process.stderr }).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`capi-sandbox failed: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
