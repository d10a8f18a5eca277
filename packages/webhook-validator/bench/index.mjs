// Benchmarks of @capi/webhook-validator, run on the built package (dist/). Timings are
// reported against baselines measured in the same run: ajv compiling the same schemas at run
// time, and a fresh Node process that imports nothing.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { batchRatio, bundleSize, interleavedBatches, percentile, printTable, record } from '@capi/bench-kit';
import { parseWebhookEvent, validateWebhookEvent } from '../dist/index.js';
import { tolerantValidators } from '../src/generated/validators.js';
import { createAjv, defaultSchemasDir, loadEventSchemas, packageDir, variants } from '../scripts/generate.mjs';

const event = JSON.parse(readFileSync(join(packageDir, 'test/fixtures/user-created-event.json'), 'utf8'));
const { schemas, events } = await loadEventSchemas();
const userCreatedId = events.find((schema) => schema.properties.eventType.const === 'user.created').$id;

// 1. Validations per second on a realistic user event (full user, two cards, banking details),
// every contender in bench-kit's interleavedBatches (short batches in a shuffled order, ratios
// from fast-decile batch times, the median of the per-round ratios beside the goal's row).
const runtimeValidate = createAjv(schemas.map(variants.tolerant)).getSchema(userCreatedId);
if (!validateWebhookEvent(event).ok || !runtimeValidate(event)) throw new Error('the bench event must be valid');
// The cost of the dispatch (options, eventType lookup, result object) over calling the
// generated validator of user.created directly.
const generatedValidate = tolerantValidators.get('user.created');
// parseWebhookEvent on the raw text of the same event (size, depth and prototype-key guards,
// JSON.parse, validation) against what a receiver would otherwise write: JSON.parse, then
// ajv compiled at run time (no guards).
const rawBody = JSON.stringify(event);
if (!parseWebhookEvent(rawBody).ok) throw new Error('the bench body must parse and validate');
// What a receiver would otherwise write: ajv compiling the spec's WebhookEvent (a oneOf of
// every event) at run time, which tries every branch on every body.
const webhookEventSchema = JSON.parse(readFileSync(join(defaultSchemasDir, 'WebhookEvent.json'), 'utf8'));
const unionValidate = createAjv([...schemas, webhookEventSchema].map(variants.tolerant)).getSchema(webhookEventSchema.$id);
if (!unionValidate(event)) throw new Error('the bench event must match WebhookEvent');
const runtimeStrictValidate = createAjv(schemas.map(variants.strict)).getSchema(userCreatedId);

const times = await interleavedBatches({
  validate: () => validateWebhookEvent(event),
  runtimeValidate: () => runtimeValidate(event),
  generatedValidate: () => generatedValidate(event),
  parse: () => parseWebhookEvent(rawBody),
  runtimeParse: () => runtimeValidate(JSON.parse(rawBody)),
  unionValidate: () => unionValidate(event),
  strictValidate: () => validateWebhookEvent(event, { strict: true }),
  runtimeStrictValidate: () => runtimeStrictValidate(event),
}, { rounds: 400, batch: 512 });

const speed = batchRatio(times, 'validate', 'runtimeValidate');
record({ name: 'validateWebhookEvent, realistic user.created', value: speed.perSecond, unit: 'ops/s (fast decile)', goal: '>= 500,000', met: speed.perSecond >= 500_000 });
record({ name: 'validateWebhookEvent vs ajv compiled at run time', value: speed.baselinePerSecond, unit: 'ops/s (baseline)', baseline: 'ajv runtime compile', ratio: speed.ratio, goal: '>= 1.0', met: speed.ratio >= 1 });
record({ name: '  the same, median of the per-round ratios (noise included)', value: speed.medianPerSecond, unit: 'ops/s (median)', baseline: 'ajv runtime compile', ratio: speed.medianRatio });
const dispatch = batchRatio(times, 'validate', 'generatedValidate');
record({ name: 'validateWebhookEvent vs its generated validator called directly', value: dispatch.baselinePerSecond, unit: 'ops/s (baseline)', baseline: 'generated user.created validator', ratio: dispatch.ratio });
const parseSpeed = batchRatio(times, 'parse', 'runtimeParse');
record({ name: `parseWebhookEvent, realistic user.created (${rawBody.length} bytes)`, value: parseSpeed.perSecond, unit: 'ops/s', baseline: 'JSON.parse + ajv runtime compile', ratio: parseSpeed.ratio });
const unionSpeed = batchRatio(times, 'validate', 'unionValidate');
record({ name: 'validateWebhookEvent vs ajv on the WebhookEvent oneOf', value: unionSpeed.baselinePerSecond, unit: 'ops/s (baseline)', baseline: 'ajv runtime compile of WebhookEvent', ratio: unionSpeed.ratio });
const strictSpeed = batchRatio(times, 'strictValidate', 'runtimeStrictValidate');
record({ name: 'validateWebhookEvent { strict: true }', value: strictSpeed.perSecond, unit: 'ops/s', baseline: 'ajv runtime compile, strict schemas', ratio: strictSpeed.ratio });
// The README's "strict costs about 2.5 times the tolerant validation": the same event, both modes.
const strictCost = batchRatio(times, 'strictValidate', 'validate');
record({ name: '  the same, against tolerant validateWebhookEvent (README: about 1/2.5)', value: strictCost.baselinePerSecond, unit: 'ops/s (baseline)', baseline: 'validateWebhookEvent, tolerant', ratio: strictCost.ratio });

// 2. Cold import: fresh Node processes, the import timed inside each, median of several.
const distUrl = pathToFileURL(join(packageDir, 'dist/index.js')).href;
const ajvUrl = pathToFileURL(join(packageDir, 'node_modules/ajv/dist/2020.js')).href;
const generateUrl = pathToFileURL(join(packageDir, 'scripts/generate.mjs')).href;
const probes = {
  package: `const t = performance.now(); const { validateWebhookEvent } = await import(${JSON.stringify(distUrl)});
    const imported = performance.now(); validateWebhookEvent(${JSON.stringify(event)});
    console.log(JSON.stringify([imported - t, performance.now() - t]));`,
  ajv: `const { loadEventSchemas, variants } = await import(${JSON.stringify(generateUrl)});
    const { schemas } = await loadEventSchemas(); const tolerant = schemas.map(variants.tolerant);
    const t = performance.now(); const { default: Ajv2020 } = await import(${JSON.stringify(ajvUrl)});
    const ajv = new Ajv2020({ allErrors: true, messages: false, strict: true, allowUnionTypes: true, validateFormats: false });
    for (const s of tolerant) ajv.addSchema(s);
    ajv.addKeyword('x-event-type'); ajv.addKeyword('x-schema-version'); ajv.addKeyword('x-assumption'); ajv.addKeyword('x-unspecified'); ajv.addKeyword('x-discriminator');
    const imported = performance.now(); ajv.getSchema(${JSON.stringify(userCreatedId)})(${JSON.stringify(event)});
    console.log(JSON.stringify([imported - t, performance.now() - t]));`,
};
const samples = { package: [], ajv: [] };
for (let i = 0; i < 11; i++) {
  for (const [name, code] of Object.entries(probes)) {
    samples[name].push(JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: packageDir, encoding: 'utf8' })));
  }
}
const median = (list, index) => percentile(list.map((sample) => sample[index]), 50);
const coldImport = median(samples.package, 0);
const coldFirstValidation = median(samples.package, 1);
const ajvFirstValidation = median(samples.ajv, 1);
record({ name: 'cold import of dist/index.js (median of 11 fresh processes)', value: coldImport, unit: 'ms' });
record({ name: 'cold import + first validation', value: coldFirstValidation, unit: 'ms', baseline: 'ajv import + compile + first validation', ratio: ajvFirstValidation / coldFirstValidation, goal: '> 1 (faster)', met: ajvFirstValidation > coldFirstValidation });

// 3. Size of the ESM build as a browser bundler ships it.
const main = await bundleSize(join(packageDir, 'dist/index.js'));
const schemasEntry = await bundleSize(join(packageDir, 'dist/schemas.js'));
record({ name: 'dist/index.js min+gzip', value: main.gzipBytes, unit: 'bytes', goal: '<= 8,192', met: main.gzipBytes <= 8192 });
record({ name: 'dist/index.js min', value: main.minBytes, unit: 'bytes' });
record({ name: '@capi/webhook-validator/schemas min+gzip', value: schemasEntry.gzipBytes, unit: 'bytes' });

printTable();
