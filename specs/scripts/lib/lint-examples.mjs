// Every example of both specs and of every schema must be valid against its schema (ajv,
// JSON Schema 2020-12), and every request, response and message must have one.
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { join } from 'node:path';
import { toStandaloneRefs } from './bundle-specs.mjs';
import { yamlLocator } from './yaml-locations.mjs';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
// Values under these keys are data, not schemas: the keyword scan skips them.
const DATA_KEYS = new Set(['example', 'examples', 'default', 'const', 'enum']);

/** An ajv that knows every standalone schema by `$id` and every `x-` keyword they use. */
export function createSchemaValidator(standaloneSchemas) {
  // strict: a misspelt keyword (`exclusiveMinumum`) is an error, not silently ignored.
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  addFormats(ajv);
  const vendorKeywords = new Set();
  for (const schema of standaloneSchemas) collectVendorKeywords(schema, vendorKeywords);
  ajv.addVocabulary([...vendorKeywords].sort());
  for (const schema of standaloneSchemas) ajv.addSchema(schema);
  return ajv;
}

function collectVendorKeywords(node, keywords) {
  if (Array.isArray(node)) return node.forEach((item) => collectVendorKeywords(item, keywords));
  if (node === null || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-')) keywords.add(key);
    else if (!DATA_KEYS.has(key)) collectVendorKeywords(value, keywords);
  }
}

function describeErrors(errors) {
  return errors.map((error) => `${error.instancePath || '/'} ${error.message}`).join('; ');
}

/** Collects the `{ path, schema, value }` example cases and the `{ path, what }` gaps of a bundled OpenAPI doc. */
function openApiExampleCases(openapi) {
  const cases = [];
  const missing = [];
  const visitMediaTypes = (content, path, what) => {
    for (const [mediaType, media] of Object.entries(content ?? {})) {
      const at = [...path, 'content', mediaType];
      if (!media.schema) continue;
      const named = Object.entries(media.examples ?? {});
      if (media.example === undefined && named.length === 0) missing.push({ path: at, what });
      if (media.example !== undefined) cases.push({ path: [...at, 'example'], schema: media.schema, value: media.example });
      for (const [name, example] of named) cases.push({ path: [...at, 'examples', name, 'value'], schema: media.schema, value: example.value });
    }
  };
  const visitOperation = (operation, path) => {
    for (const [index, parameter] of (operation.parameters ?? []).entries()) {
      if (parameter.example !== undefined) cases.push({ path: [...path, 'parameters', index, 'example'], schema: parameter.schema, value: parameter.example });
    }
    if (operation.requestBody) visitMediaTypes(operation.requestBody.content, [...path, 'requestBody'], 'request body');
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      if (response.content) visitMediaTypes(response.content, [...path, 'responses', status], `${status} response`);
    }
  };
  for (const section of ['paths', 'webhooks']) {
    for (const [name, item] of Object.entries(openapi[section] ?? {})) {
      for (const method of HTTP_METHODS) if (item[method]) visitOperation(item[method], [section, name, method]);
    }
  }
  for (const [name, response] of Object.entries(openapi.components?.responses ?? {})) {
    visitMediaTypes(response.content, ['components', 'responses', name], `${name} response`);
  }
  return { cases, missing };
}

function asyncApiExampleCases(asyncapi) {
  const cases = [];
  const missing = [];
  for (const [name, message] of Object.entries(asyncapi.components?.messages ?? {})) {
    const at = ['components', 'messages', name];
    if (!message.examples?.length) missing.push({ path: at, what: 'message' });
    for (const [index, example] of (message.examples ?? []).entries()) {
      if (message.payload) cases.push({ path: [...at, 'examples', index, 'payload'], schema: message.payload, value: example.payload });
      if (message.headers) cases.push({ path: [...at, 'examples', index, 'headers'], schema: message.headers, value: example.headers });
    }
  }
  return { cases, missing };
}

/** Every `examples` array inside a standalone schema, checked against the subschema it sits on. */
function schemaExampleCases(schema) {
  const cases = [];
  const walk = (node, pointer) => {
    if (Array.isArray(node)) return node.forEach((item, index) => walk(item, [...pointer, index]));
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node.examples)) {
      for (const [index, value] of node.examples.entries()) {
        const fragment = pointer.length ? `#/${pointer.map((key) => String(key).replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}` : '';
        cases.push({ path: [...pointer, 'examples', index], schema: { $ref: `${schema.$id}${fragment}` }, value });
      }
    }
    for (const [key, value] of Object.entries(node)) if (!DATA_KEYS.has(key) && !key.startsWith('x-')) walk(value, [...pointer, key]);
  };
  walk(schema, []);
  return cases;
}

/**
 * Checks every example. `specs` are the bundled documents with the source file each comes
 * from (for lines); `schemaFiles` maps title -> standalone schema. Returns LintProblems.
 */
export function lintExamples(specsDir, { openapi, asyncapi, standaloneSchemas }) {
  let ajv;
  try {
    ajv = createSchemaValidator([...standaloneSchemas.values()]);
  } catch (error) {
    return [{ tool: 'examples', rule: 'schema-compile', severity: 'error', file: 'schemas', line: 0, column: 0, message: error.message }];
  }
  const problems = [];
  const check = (file, locate, { path, schema, value }) => {
    let validate;
    try {
      validate = ajv.compile(toStandaloneRefs(schema));
    } catch (error) {
      const { line, column } = locate(path);
      problems.push({ tool: 'examples', rule: 'schema-compile', severity: 'error', file, line, column, message: `${error.message} (at ${path.join('.')})` });
      return;
    }
    if (!validate(value)) {
      const { line, column } = locate(path);
      problems.push({ tool: 'examples', rule: 'example-valid', severity: 'error', file, line, column, message: `example does not match its schema: ${describeErrors(validate.errors)} (at ${path.join('.')})` });
    }
  };
  const reportMissing = (file, locate, { path, what }) => {
    const { line, column } = locate(path);
    problems.push({ tool: 'examples', rule: 'example-present', severity: 'error', file, line, column, message: `the ${what} has no example; add \`examples:\` (at ${path.join('.')})` });
  };
  for (const [file, document, collect] of [['openapi.yaml', openapi, openApiExampleCases], ['asyncapi.yaml', asyncapi, asyncApiExampleCases]]) {
    const locate = yamlLocator(join(specsDir, file));
    const { cases, missing } = collect(document);
    for (const item of cases) check(file, locate, item);
    for (const item of missing) reportMissing(file, locate, item);
  }
  for (const [title, schema] of standaloneSchemas) {
    const file = `schemas/${title}.yaml`;
    const locate = yamlLocator(join(specsDir, file));
    for (const item of schemaExampleCases(schema)) check(file, locate, item);
  }
  return problems;
}
