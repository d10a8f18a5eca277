// The bundled specs as the tests read them: built in memory from the files on disk.
import { buildSpecOutputs } from '../../scripts/bundle.mjs';
import { SCHEMA_ID_BASE } from '../../scripts/lib/bundle-specs.mjs';

export type JsonObject = Record<string, any>;

export interface SpecOutputs {
  openapi: JsonObject;
  asyncapi: JsonObject;
  schemas: Map<string, JsonObject>;
}

/** Bundles the specs in `dir` (default: this package) and parses every output. */
export async function readSpecOutputs(dir?: string): Promise<SpecOutputs> {
  const outputs: Map<string, string> = await buildSpecOutputs(dir);
  const schemas = new Map<string, JsonObject>();
  for (const [path, text] of outputs) {
    if (path.startsWith('schemas/')) schemas.set(path.slice('schemas/'.length, -'.json'.length), JSON.parse(text));
  }
  return {
    openapi: JSON.parse(outputs.get('openapi.json')!),
    asyncapi: JSON.parse(outputs.get('asyncapi.json')!),
    schemas,
  };
}

/** The title a `$ref` of a bundled spec or standalone schema points to. */
export function refTitle(ref: string): string {
  const match = /(?:#\/components\/schemas\/|^)([A-Za-z0-9]+)(?:\.json)?$/.exec(ref.replace(SCHEMA_ID_BASE, ''));
  if (!match) throw new Error(`not a whole-schema $ref: ${ref}`);
  return match[1];
}
