import {
  ConstrainedDictionaryModel, ConstrainedObjectModel, ConstrainedReferenceModel, TypeScriptGenerator, typeScriptDefaultModelNameConstraints,
} from '@asyncapi/modelina';
import { EventTypesGenerationError } from './generation-error.mjs';
import { describeWithExample, tsdocComment } from '@capi/codegen-kit';

/**
 * A property key as TypeScript needs it: bare when it is an identifier, quoted otherwise
 * (`'X-Webhook-Timestamp'`), always the wire name.
 *
 * @param {string} name
 * @returns {string}
 * @example
 * propertyKey('kycStatus') // 'kycStatus'
 */
export function propertyKey(name) {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

/** @param {{ options: { isNullable?: boolean } }} model @param {string} type */
const orNull = (model, type) => (model.options.isNullable ? `${type} | null` : type);

/**
 * The description to show on a property: a property that only refers to a named schema
 * would repeat that schema's own description, which its declaration already carries.
 *
 * @param {import('@asyncapi/modelina').ConstrainedMetaModel} model the property's model
 * @returns {string | undefined}
 */
function propertyDescription(model) {
  const description = model.originalInput?.description;
  if (model instanceof ConstrainedReferenceModel && model.ref.originalInput?.description === description) return undefined;
  return description;
}

/**
 * Every declaration is exported (one shared file, no per-model imports) and carries its
 * schema's description and first example as TSDoc.
 *
 * @param {{ model: { originalInput?: any }, content: string }} args
 */
const exportedWithDescription = ({ model, content }) => `${tsdocComment(describeWithExample(model.originalInput))}export ${content}`;

/**
 * A schema title that is already a PascalCase identifier is the type name as it is
 * (modelina would turn Status into ReservedStatus because `status` is a browser global;
 * TypeScript's keywords are all lower case, so they cannot clash). Anything else, such as
 * modelina's names for untitled schemas, goes through modelina's default constraint.
 *
 * @template {{ modelName: string }} T
 * @param {(context: T) => string} fallback
 * @returns {(context: T) => string}
 */
const keepPascalCaseTitles = (fallback) => (context) => (/^[A-Z][A-Za-z0-9]*$/.test(context.modelName) ? context.modelName : fallback(context));

/**
 * Modelina's TypeScript defaults are made for classes that (de)serialize; these types
 * describe the JSON on the wire instead, hence each override.
 */
const wireTypesGenerator = () => new TypeScriptGenerator({
  modelType: 'interface',
  enumType: 'union',
  mapType: 'record',
  // Wire names are kept as they are; propertyKey() decides about quoting.
  rawPropertyNames: true,
  constraints: { modelName: keepPascalCaseTitles(typeScriptDefaultModelNameConstraints()) },
  typeMapping: {
    // Nullability of a referenced object or enum lives on the reference (`bankingDetails`).
    Object: ({ constrainedModel }) => orNull(constrainedModel, constrainedModel.name),
    Reference: ({ constrainedModel }) => orNull(constrainedModel, constrainedModel.name),
    Enum: ({ constrainedModel }) => orNull(constrainedModel, constrainedModel.name),
    // An open object is data to inspect, not to trust: unknown, never any.
    Any: () => 'unknown',
  },
  presets: [
    {
      interface: {
        property({ property }) {
          // Modelina models "additional properties allowed" as a pseudo-property called
          // additionalProperties; on the wire there is no such key, so it is left out.
          if (property.property instanceof ConstrainedDictionaryModel && property.property.serializationType === 'unwrap') return '';
          const optional = property.required ? '' : '?';
          const constValue = property.property.originalInput?.const;
          const type = constValue === undefined ? property.property.type : JSON.stringify(constValue);
          return `${tsdocComment(propertyDescription(property.property))}${propertyKey(property.unconstrainedPropertyName)}${optional}: ${type};`;
        },
        self: exportedWithDescription,
      },
      type: { self: exportedWithDescription },
      enum: { self: exportedWithDescription },
    },
  ],
});

// The channel that carries every component schema to modelina (see below); its name
// is not one a spec would use.
const COMPONENT_SCHEMAS_CHANNEL = 'capiGenComponentSchemas';

/**
 * Modelina only renders schemas reachable from message payloads, so a schema such as
 * WebhookHeaders (used as message headers) would get no type. A copy of the document with
 * one extra channel whose messages carry every component schema makes modelina render
 * each of them once.
 *
 * @param {any} doc bundled AsyncAPI 3 document
 * @returns {any} a copy; `doc` is left untouched
 */
function withComponentSchemasAsMessages(doc) {
  const copy = structuredClone(doc);
  const schemaNames = Object.keys(copy.components?.schemas ?? {});
  copy.components = { ...copy.components, messages: { ...copy.components?.messages } };
  /** @type {Record<string, { $ref: string }>} */
  const channelMessages = {};
  for (const name of schemaNames) {
    const key = `${COMPONENT_SCHEMAS_CHANNEL}-${name}`;
    copy.components.messages[key] = { name, payload: { $ref: `#/components/schemas/${name}` } };
    channelMessages[key] = { $ref: `#/components/messages/${key}` };
  }
  copy.channels = { ...copy.channels, [COMPONENT_SCHEMAS_CHANNEL]: { messages: channelMessages } };
  copy.operations = { ...copy.operations, [COMPONENT_SCHEMAS_CHANNEL]: { action: 'receive', channel: { $ref: `#/channels/${COMPONENT_SCHEMAS_CHANNEL}` } } };
  return copy;
}

/**
 * Where a model is used, as `Interface.property` (for the error about untitled schemas).
 *
 * @param {string} modelName
 * @param {import('@asyncapi/modelina').OutputModel[]} models
 * @returns {string}
 */
function whereUsed(modelName, models) {
  const uses = models.flatMap((model) => Object.entries(model.model instanceof ConstrainedObjectModel ? model.model.properties : {})
    .filter(([, property]) => new RegExp(`\\b${modelName}\\b`).test(property.property.type))
    .map(([name]) => `${model.modelName}.${name}`));
  return uses.length > 0 ? uses.join(', ') : modelName;
}

/**
 * Runs modelina over the bundled AsyncAPI document and returns one exported declaration
 * per schema (interfaces for objects, union types for enums, aliases otherwise): every
 * message payload and every component schema, in modelina's order. The union modelina
 * makes per channel is left out: WebhookEvent takes its place.
 *
 * @param {any} doc bundled AsyncAPI 3 document
 * @returns {Promise<{ names: string[], code: string }>}
 * @example
 * const { names } = await renderModels(doc) // ['UserCreatedEvent', 'User', ...]
 */
export async function renderModels(doc) {
  const channelModelNames = new Set([...Object.keys(doc.channels ?? {}), COMPONENT_SCHEMAS_CHANNEL]
    .map((name) => name.replace(/[^A-Za-z0-9]/g, '').toLowerCase()));
  const models = await wireTypesGenerator().generate(withComponentSchemasAsMessages(doc));
  const kept = models.filter((model) => !channelModelNames.has(model.modelName.toLowerCase()));
  const anonymous = kept.filter((model) => /^AnonymousSchema/i.test(model.modelName));
  if (anonymous.length > 0) {
    throw new EventTypesGenerationError('ANONYMOUS_SCHEMA',
      `Schemas without a title at ${anonymous.map((model) => whereUsed(model.modelName, kept)).join(', ')}; give every object and enum schema a title (move it to specs/schemas/<Title>.yaml) so each gets a real type name instead of ${anonymous[0]?.modelName}.`);
  }
  const code = kept
    // Blank lines that modelina leaves where a pseudo-property was dropped.
    .map((model) => `${model.result.replace(/\n\s*\n(?=\s*[}\w"/])/g, '\n')}\n`)
    .join('\n');
  return { names: kept.map((model) => model.modelName), code };
}
