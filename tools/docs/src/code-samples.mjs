// The TypeScript samples of the guides, extracted so a test can compile them against the
// packages as built: a guide whose code no longer compiles fails the build of the docs.
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Every ```ts (or ```typescript) block of a markdown text, with the line it starts on.
 * @param {string} markdown
 * @returns {{ code: string, line: number }[]}
 */
export function extractTsSamples(markdown) {
  const samples = [];
  const fence = /^```(?:ts|typescript)\s*\n([\s\S]*?)^```\s*$/gm;
  for (let match = fence.exec(markdown); match; match = fence.exec(markdown)) {
    samples.push({ code: match[1], line: markdown.slice(0, match.index).split('\n').length + 1 });
  }
  return samples;
}

/**
 * Writes the samples as modules into `scratchDir` (inside this package, so that express,
 * hono, viem and @types/node resolve from its node_modules, and its `"type": "module"` makes
 * them ES modules) and runs tsc on them once per module resolution: `bundler` (a partner's
 * bundler or framework), with `paths` mapping each workspace package name to its folder, and
 * `node16` (a partner's `"type": "module"` Node app built with tsc, where a default import of
 * a CommonJS package such as `import Redis from 'ioredis'` is not the class), with the
 * packages resolved from this package's node_modules as a partner's are.
 * @param {{ name: string, file: string, code: string, line: number }[]} samples
 * @param {{ packages: { name: string, dir: string }[], scratchDir?: string, resolutions?: ('bundler' | 'node16')[] }} options
 * @returns {Promise<{ ok: boolean, output: string }>} tsc's diagnostics, with sample names, each run's headed by its resolution
 */
export async function typeCheckSamples(samples, { packages, scratchDir = path.join(packageDir, '.samples'), resolutions = ['bundler', 'node16'] }) {
  rmSync(scratchDir, { recursive: true, force: true });
  mkdirSync(scratchDir, { recursive: true });
  const files = samples.map((sample) => {
    const file = `${sample.name}.ts`;
    writeFileSync(path.join(scratchDir, file), `// ${sample.file}:${sample.line}\n${sample.code}`);
    return file;
  });
  const paths = Object.fromEntries(packages.flatMap((pkg) => [[pkg.name, [pkg.dir]], [`${pkg.name}/*`, [`${pkg.dir}/dist/*`]]]));
  let ok = true;
  let output = '';
  for (const resolution of resolutions) {
    const tsconfig = path.join(scratchDir, `tsconfig.${resolution}.json`);
    writeFileSync(
      tsconfig,
      JSON.stringify(
        {
          compilerOptions: {
            target: 'es2022',
            ...(resolution === 'node16' ? { module: 'node16', moduleResolution: 'node16' } : { module: 'esnext', moduleResolution: 'bundler', paths }),
            lib: ['es2022', 'dom', 'dom.iterable'],
            types: ['node'],
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            isolatedModules: true,
          },
          files,
        },
        null,
        2,
      ),
    );
    try {
      await run(path.join(packageDir, 'node_modules/.bin/tsc'), ['-p', tsconfig, '--pretty', 'false'], { cwd: scratchDir, maxBuffer: 16 * 1024 * 1024 });
    } catch (error) {
      ok = false;
      output += `moduleResolution ${resolution}:\n${/** @type {any} */ (error).stdout ?? ''}${/** @type {any} */ (error).stderr ?? ''}`;
    }
  }
  return { ok, output };
}

/**
 * What a sample says it prints: the trailing comment of each `console.log(...)` line
 * (`console.log(x); // "synced"`), surrounding double quotes removed, in order.
 * @param {string} code
 * @returns {string[]}
 */
export function printedExpectations(code) {
  const expectations = [];
  for (const line of code.split('\n')) {
    const match = /^\s*console\.log\(.*\);\s*\/\/\s*(.+?)\s*$/.exec(line);
    if (match) expectations.push(match[1].replace(/^"(.*)"$/, '$1'));
  }
  return expectations;
}

/**
 * Runs one sample as a partner would: compiled to an ES module (types stripped, nothing else
 * changed) in `scratchDir` (inside this package, so that the @capi packages, viem and the rest
 * resolve from its node_modules), then executed by this Node.
 * @param {{ name: string, code: string }} sample
 * @param {{ scratchDir?: string, timeoutMs?: number }} [options]
 * @returns {Promise<{ exitCode: number, stdout: string, stderr: string }>}
 */
export async function runSample(sample, { scratchDir = path.join(packageDir, '.samples-run'), timeoutMs = 60_000 } = {}) {
  const { default: ts } = await import('typescript');
  mkdirSync(scratchDir, { recursive: true });
  const file = path.join(scratchDir, `${sample.name}.mjs`);
  const { outputText } = ts.transpileModule(sample.code, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
    fileName: `${sample.name}.ts`,
  });
  writeFileSync(file, outputText);
  try {
    const { stdout, stderr } = await run(process.execPath, [file], { cwd: scratchDir, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
    return { exitCode: 0, stdout, stderr };
  } catch (error) {
    const failure = /** @type {any} */ (error);
    return { exitCode: typeof failure.code === 'number' ? failure.code : 1, stdout: failure.stdout ?? '', stderr: `${failure.stderr ?? ''}${failure.killed ? `\n(killed after ${timeoutMs} ms)` : ''}` };
  }
}
