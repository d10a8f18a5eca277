import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const prismCli = join(dirname(createRequire(import.meta.url).resolve('@stoplight/prism-cli/package.json')), 'dist', 'index.js');

/**
 * Starts `prism proxy --errors <spec> <upstream>` on a free loopback port as a child
 * process and resolves once it listens. Prism validates every request and response
 * against the spec independently of the sandbox. Another process may take the port between
 * freePort() and Prism's bind (Prism then exits): a few ports are tried.
 */
export async function startPrismProxy(specPath: string, upstream: string): Promise<{ url: string; output: () => string; close(): Promise<void> }> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await launchPrism(specPath, upstream, await freePort());
    } catch (error) {
      if (attempt === 4) throw error;
    }
  }
}

async function launchPrism(specPath: string, upstream: string, port: number): Promise<{ url: string; output: () => string; close(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, [prismCli, 'proxy', '--errors', specPath, upstream, '--host', '127.0.0.1', '--port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (output.includes('Prism is listening')) {
        child.stdout!.off('data', onData);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`prism exited with ${code} before listening:\n${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
