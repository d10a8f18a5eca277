/**
 * The comment at the top of every generated file: which spec produced it and how to
 * regenerate it. No dates or tool versions, so two runs are byte-identical.
 *
 * @param {string} specPath repository-relative path of the hand-written spec
 * @param {string} bundlePath repository-relative path of the bundle that was read
 * @param {string} [specVersion] `info.version` of the spec
 * @returns {string}
 * @example
 * generatedHeader('specs/openapi.yaml', 'specs/dist/openapi.json', '1.0.0')
 */
export function generatedHeader(specPath, bundlePath, specVersion) {
  return [
    '// This file is generated. Do not edit it by hand.',
    `// Source: ${specPath}${specVersion ? ` (info.version ${specVersion})` : ''}, read from ${bundlePath}.`,
    '// Regenerate: pnpm --filter @capi/openapi-types gen (pnpm build runs it).',
    '',
  ].join('\n');
}
