// Separate Node processes of a partner's server (support/session-process.ts), each running the
// client's server sample: server-sessions.test.ts orders them over IPC.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import type { SessionAnswer, SessionCommand } from './session-process.js';

const journeyDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const repoDir = join(journeyDir, '..', '..');

/**
 * Compiles the process script and the sample it imports, from their current source, to
 * JavaScript (types stripped, nothing bundled) in a folder of the journey package's
 * node_modules, so that their imports (`@capi/client`, `ioredis`) resolve as this package's do.
 * Returns the script's path and a function that removes the folder.
 */
export function compileSessionProcess(): { script: string; remove: () => void } {
  const outDir = join(journeyDir, 'node_modules', '.cache', 'capi-journey-server-sessions', String(process.pid));
  const sources = [join(journeyDir, 'test', 'support', 'session-process.ts'), join(repoDir, 'packages', 'client', 'examples', 'server-sessions.ts')];
  for (const source of sources) {
    // The repository's layout, kept: the script's relative import of the sample still holds.
    const out = join(outDir, relative(repoDir, source)).replace(/\.ts$/, '.js');
    const { outputText } = ts.transpileModule(readFileSync(source, 'utf8'), {
      fileName: source,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    });
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, outputText);
  }
  writeFileSync(join(outDir, 'package.json'), JSON.stringify({ type: 'module' }));
  return { script: join(outDir, relative(repoDir, sources[0]!)).replace(/\.ts$/, '.js'), remove: () => rmSync(outDir, { recursive: true, force: true }) };
}

/** One running process: its orders, what it told the test, and its end. */
export interface SessionProcess {
  /** Sends an order and resolves to what it answered (an error it ended with is an answer too). */
  order(command: SessionCommand): Promise<SessionAnswer>;
  /** The events it told, in order (`refresh-held`, `refresh-at-service`). */
  readonly events: string[];
  /** What it wrote to stdout and stderr, for failure messages. */
  output(): string;
  close(): Promise<void>;
}

/** Starts a process (`env`: CAPI_BASE_URL, REDIS_PORT, KEY_PREFIX, LOCK_MS) and waits until it is ready. */
export function startSessionProcess(script: string, env: Record<string, string>): Promise<SessionProcess> {
  // No execArgv: the test runner's own flags are not the child's business.
  const child: ChildProcess = fork(script, [], { env: { ...process.env, ...env }, execArgv: [], serialization: 'advanced', stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  let output = '';
  child.stdout!.on('data', (chunk) => { output += chunk; });
  child.stderr!.on('data', (chunk) => { output += chunk; });
  const events: string[] = [];
  const pending = new Map<number, (answer: SessionAnswer) => void>();
  let nextId = 0;
  const exited = new Promise<void>((resolve) => { child.once('exit', () => resolve()); });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`session process exited with ${code} before it was ready:\n${output}`)));
    child.on('message', (message: { event?: string; id?: number; answer?: SessionAnswer }) => {
      if (message.event === 'ready') {
        resolve({
          order: (command) => new Promise((answered) => {
            pending.set(++nextId, answered);
            child.send({ id: nextId, command });
          }),
          events,
          output: () => output,
          close: async () => {
            if (child.exitCode === null && child.signalCode === null) child.disconnect();
            await exited;
          },
        });
      } else if (message.event !== undefined) {
        events.push(message.event);
      } else {
        pending.get(message.id!)?.(message.answer!);
        pending.delete(message.id!);
      }
    });
  });
}
