import ts from 'typescript';
import { tsLiteral, tsUnion } from 'openapi-typescript';

/**
 * The spec writes an enum whose list is known to be incomplete (the onboarding status) as
 * `anyOf: [{ type: string, enum: [...] }, { type: string }]`. Plain TypeScript collapses
 * `"a" | "b" | string` to `string`, losing the known values; `"a" | "b" | (string & {})`
 * keeps them for completion and narrowing while still accepting any string.
 *
 * @param {any} schema a schema object openapi-typescript is about to transform
 * @returns {ts.TypeNode | undefined} the type for an open string enum, undefined otherwise
 * @example
 * openStringEnum({ anyOf: [{ type: 'string', enum: ['a'] }, { type: 'string' }] }) // "a" | (string & {})
 */
export function openStringEnum(schema) {
  const branches = schema?.anyOf ?? schema?.oneOf;
  if (!Array.isArray(branches) || branches.length !== 2) return undefined;
  const known = branches.find((/** @type {any} */ branch) => branch?.type === 'string' && Array.isArray(branch.enum) && branch.enum.every((/** @type {unknown} */ value) => typeof value === 'string'));
  const open = branches.find((/** @type {any} */ branch) => branch !== known && branch?.type === 'string' && !('enum' in branch) && !('const' in branch));
  if (!known || !open) return undefined;
  const anyString = ts.factory.createIntersectionTypeNode([
    ts.factory.createKeywordTypeNode(ts.SyntaxKind.StringKeyword),
    ts.factory.createTypeLiteralNode([]),
  ]);
  return tsUnion([...known.enum.map((/** @type {string} */ value) => tsLiteral(value)), ts.factory.createParenthesizedType(anyString)]);
}
