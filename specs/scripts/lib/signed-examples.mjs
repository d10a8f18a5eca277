// The webhook examples are real deliveries: each X-Webhook-Signature example verifies over
// `${X-Webhook-Timestamp}.${rawBody}` (reference 6.2; rawBody = the example body as compact JSON)
// with the key of the `getWebhookPublicKey` example, so that partners, the sandbox and the docs
// can replay them as test vectors. That key's private half is `examples/webhook-signing-key.pem`
// (an example key: public, it signs nothing but these examples); `pnpm sign:examples` writes the
// signatures and the key examples from it, and the lint checks them.
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { yamlSource } from './yaml-locations.mjs';

/** The example signing key, relative to the specs directory. */
export const SIGNING_KEY_FILE = 'examples/webhook-signing-key.pem';
const SIGN_COMMAND = '`pnpm sign:examples` (it signs them with specs/examples/webhook-signing-key.pem)';
const PUBLIC_KEY_PATH = ['paths', '/api/v1/public-key', 'get', 'responses', '200', 'content', 'application/json', 'examples'];

/**
 * Every signed example of the specs in `specsDir`, written in the sources (an example reused
 * through a YAML alias is checked where it is written):
 * `{ file, path, timestamp, rawBody, signature, where }`, from the bundled documents.
 */
export function signedExamples(specsDir, { openapi, asyncapi, standaloneSchemas }) {
  const cases = [];
  const messages = Object.entries(asyncapi.components?.messages ?? {});
  for (const [name, message] of messages) {
    for (const [index, example] of (message.examples ?? []).entries()) {
      const headers = example.headers ?? {};
      if (headers['X-Webhook-Signature'] === undefined) continue;
      cases.push({
        file: 'asyncapi.yaml',
        path: ['components', 'messages', name, 'examples', index, 'headers', 'X-Webhook-Signature'],
        timestamp: headers['X-Webhook-Timestamp'],
        rawBody: JSON.stringify(example.payload),
        signature: headers['X-Webhook-Signature'],
        where: `the ${message.name ?? name} message example`,
      });
    }
  }
  const openapiSource = yamlSource(join(specsDir, 'openapi.yaml'));
  for (const [name, item] of Object.entries(openapi.webhooks ?? {})) {
    const operation = item.post;
    const parameters = operation?.parameters ?? [];
    const signatureIndex = parameters.findIndex((parameter) => parameter.name === 'X-Webhook-Signature' && parameter.example !== undefined);
    if (signatureIndex < 0) continue;
    const path = ['webhooks', name, 'post', 'parameters', signatureIndex, 'example'];
    if (openapiSource.find(path)?.aliased !== false) continue;
    const content = operation.requestBody?.content?.['application/json'];
    const body = content?.example ?? Object.values(content?.examples ?? {})[0]?.value;
    cases.push({
      file: 'openapi.yaml',
      path,
      timestamp: parameters.find((parameter) => parameter.name === 'X-Webhook-Timestamp')?.example,
      rawBody: JSON.stringify(body),
      signature: parameters[signatureIndex].example,
      where: `the ${name} webhook's header example (signed over its body example)`,
    });
  }
  // The WebhookHeaders schema's examples are the headers of the user.created example delivery.
  const userCreated = messages.find(([, message]) => message.name === 'user.created')?.[1]?.examples?.[0];
  for (const [index, example] of (standaloneSchemas.get('WebhookHeaders')?.examples ?? []).entries()) {
    if (example['X-Webhook-Signature'] === undefined || userCreated === undefined) continue;
    cases.push({
      file: 'schemas/WebhookHeaders.yaml',
      path: ['examples', index, 'X-Webhook-Signature'],
      timestamp: example['X-Webhook-Timestamp'],
      rawBody: JSON.stringify(userCreated.payload),
      signature: example['X-Webhook-Signature'],
      where: 'the WebhookHeaders example (the user.created delivery)',
    });
  }
  return cases;
}

/** Every example of the webhook public key (`{ file, path, pem }`), written in the sources. */
export function publicKeyExamples(specsDir, { openapi, standaloneSchemas }) {
  const cases = [];
  const openapiSource = yamlSource(join(specsDir, 'openapi.yaml'));
  for (const [name, example] of Object.entries(openapi.paths?.['/api/v1/public-key']?.get?.responses?.['200']?.content?.['application/json']?.examples ?? {})) {
    const path = [...PUBLIC_KEY_PATH, name, 'value', 'publicKey'];
    if (typeof example.value?.publicKey === 'string' && openapiSource.find(path)?.aliased === false) cases.push({ file: 'openapi.yaml', path, pem: example.value.publicKey });
  }
  for (const [index, example] of (standaloneSchemas.get('WebhookPublicKey')?.examples ?? []).entries()) {
    if (typeof example.publicKey === 'string') cases.push({ file: 'schemas/WebhookPublicKey.yaml', path: ['examples', index, 'publicKey'], pem: example.publicKey });
  }
  return cases;
}

/** The example signing key of `specsDir` (a KeyObject), or undefined when it has none. */
export function readSigningKey(specsDir) {
  const file = join(specsDir, SIGNING_KEY_FILE);
  return existsSync(file) ? createPrivateKey(readFileSync(file, 'utf8')) : undefined;
}

/** The signed data of an example delivery: the UTF-8 bytes of `${timestamp}.${rawBody}`. */
export function signedPayload({ timestamp, rawBody }) {
  return Buffer.from(`${timestamp}.${rawBody}`, 'utf8');
}

/**
 * Lint: the key examples are the public half of the example signing key, and every signed
 * example verifies with it. Returns LintProblems (tool `examples`, rules `example-key`,
 * `example-signature`) at the line where the value is written.
 */
export function lintSignedExamples(specsDir, outputs) {
  const problems = [];
  const sources = new Map();
  const at = (file, path) => {
    if (!sources.has(file)) sources.set(file, yamlSource(join(specsDir, file)));
    const source = sources.get(file);
    return source.position(source.find(path)?.node);
  };
  const report = (rule, { file, path }, message) => problems.push({ tool: 'examples', rule, severity: 'error', file, ...at(file, path), message: `${message} (at ${path.join('.')})` });

  const signingKey = readSigningKey(specsDir);
  const expectedPem = signingKey === undefined ? undefined : createPublicKey(signingKey).export({ type: 'spki', format: 'pem' });
  const keys = publicKeyExamples(specsDir, outputs);
  let publicKey;
  for (const example of keys) {
    let key;
    try {
      key = createPublicKey(example.pem);
    } catch (error) {
      report('example-key', example, `the public key example is not a PEM key (${error.message})`);
      continue;
    }
    if (key.asymmetricKeyType !== 'ed25519') report('example-key', example, `the public key example is a ${key.asymmetricKeyType} key, not Ed25519`);
    else if (expectedPem !== undefined && example.pem.trim() !== expectedPem.trim()) report('example-key', example, `the public key example is not the public half of ${SIGNING_KEY_FILE}: run ${SIGN_COMMAND}`);
    else publicKey ??= key;
  }
  if (publicKey === undefined) return problems;
  for (const example of signedExamples(specsDir, outputs)) {
    const signature = Buffer.from(String(example.signature), 'base64');
    const verifies = signature.length === 64 && /^\d+$/.test(String(example.timestamp)) && verify(null, signedPayload(example), publicKey, signature);
    if (!verifies) {
      report('example-signature', example, `${example.where} has an X-Webhook-Signature that does not verify over \`\${X-Webhook-Timestamp}.\${rawBody}\` (the body as compact JSON) with the getWebhookPublicKey example key; a copied or edited example needs signing again: run ${SIGN_COMMAND}`);
    }
  }
  return problems;
}

/**
 * The source edits that sign every example with the example signing key and write its public
 * half into the key examples: `{ file, start, end, text }` (a range of the file's text and its
 * replacement), none overlapping.
 */
export function signingEdits(specsDir, outputs, privateKey) {
  const publicPem = createPublicKey(privateKey).export({ type: 'spki', format: 'pem' });
  const publicBase64 = publicPem.split('\n')[1];
  const edits = [];
  const sources = new Map();
  const sourceOf = (file) => {
    if (!sources.has(file)) sources.set(file, yamlSource(join(specsDir, file)));
    return sources.get(file);
  };
  // Replaces `from` by `to` inside the text of the node at `path`, keeping its quoting and layout.
  const replaceIn = (file, path, from, to) => {
    const source = sourceOf(file);
    const node = source.find(path)?.node;
    const [start, end] = node?.range ?? [];
    const written = start === undefined ? '' : source.text.slice(start, end);
    if (!written.includes(from)) throw new Error(`${file}: cannot find ${JSON.stringify(from)} written at ${path.join('.')}`);
    if (from !== to) edits.push({ file, start, end, text: written.replace(from, to) });
  };
  for (const example of publicKeyExamples(specsDir, outputs)) {
    const [, base64] = example.pem.split('\n');
    replaceIn(example.file, example.path, base64, publicBase64);
  }
  for (const example of signedExamples(specsDir, outputs)) {
    replaceIn(example.file, example.path, String(example.signature), sign(null, signedPayload(example), privateKey).toString('base64'));
  }
  return edits;
}

