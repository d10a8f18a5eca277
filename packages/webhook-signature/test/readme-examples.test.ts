import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeReadmeExamples } from '@capi/codegen-kit/testing';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

describeReadmeExamples({
  packageDir,
  packageName: '@capi/webhook-signature',
  prelude: '',
  // The README's examples are JavaScript (Express, a Worker, signing in a test): checked as such.
  js: true,
  // The free names: the user the signWebhook example sends as the event's data; the Bun and
  // Deno servers, and the handleWebhook of the Worker example that their blocks call.
  jsPrelude: [
    'declare const user: Record<string, unknown>;',
    'declare function handleWebhook(request: Request, publicKey: string | undefined): Promise<Response>;',
    'declare const Bun: { serve(options: { port: number; fetch(request: Request): Promise<Response> }): unknown };',
    'declare const Deno: { serve(options: { port: number }, handler: (request: Request) => Promise<Response>): unknown; env: { get(name: string): string | undefined } };',
    '',
  ].join('\n'),
  extraPaths: { express: [join(packageDir, 'node_modules/@types/express')] },
  // process.env and Express's Node request and response; the package's Node build (node:crypto).
  types: ['node'],
});
