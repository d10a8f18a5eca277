import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeReadmeExamples } from '@capi/codegen-kit/testing';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const modules = join(packageDir, 'node_modules');

describeReadmeExamples({
  packageDir,
  packageName: '@capi/webhook-receiver',
  // The free names the README's snippets stand for: the receiver of the quick start and its
  // public key, the partner's database and loggers, the framework apps (Express, Hono, Fastify),
  // the Worker's Env, ExecutionContext and ScheduledController, Bun's server, and the store factories that later snippets use without importing them.
  prelude: [
    "import { createMemoryDedupeStore, createRedisDeadLetterStore, createRedisDedupeStore, type WebhookReceiver } from '@capi/webhook-receiver';",
    "import type { DurableObjectNamespaceLike } from '@capi/webhook-receiver/durable-object';",
    "import express from 'express';",
    "import { Hono } from 'hono';",
    "import type { FastifyInstance } from 'fastify';",
    'declare const receiver: WebhookReceiver;',
    'declare const publicKey: string;',
    'declare const app: FastifyInstance;',
    'declare const db: { users: { insertMissingFields(user: unknown): Promise<void>; upsert(id: string, values: Record<string, unknown>): Promise<void> } };',
    'declare const log: { warn(fields: object, message: string): void };',
    'declare const logger: { error(fields: object, message: string): void };',
    'interface Env { CAPI_WEBHOOK_PUBLIC_KEY: string; WEBHOOK_STORE: DurableObjectNamespaceLike }',
    'interface ExecutionContext { waitUntil(promise: Promise<unknown>): void }',
    'interface ScheduledController { readonly cron: string; readonly scheduledTime: number }',
    'declare const Bun: { serve(options: { port: number; fetch(request: Request): Promise<Response> }): unknown };',
    '',
  ].join('\n'),
  extraPaths: {
    '@capi/webhook-receiver/durable-object': [join(packageDir, 'src/durable-object.ts')],
    express: [join(modules, '@types/express')],
    hono: [join(modules, 'hono')],
    fastify: [join(modules, 'fastify')],
    ioredis: [join(modules, 'ioredis')],
    // The PostgreSQL client of the transactional store's example.
    pg: [join(modules, '@types/pg')],
  },
  // process.env, node:http.
  types: ['node'],
});
