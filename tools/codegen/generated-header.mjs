/**
 * The comment at the top of every generated file: which spec produced it and how to
 * regenerate it. No dates or tool versions, so two runs are byte-identical.
 *
 * @param {object} source
 * @param {string} source.specPath repository-relative path of the hand-written spec
 * @param {string} source.bundlePath repository-relative path of the bundle that was read
 * @param {string} [source.specVersion] `info.version` of the spec
 * @param {string} source.packageName the package whose `gen` script regenerates the file
 * @returns {string}
 * @example
 * generatedHeader({ specPath: 'specs/openapi.yaml', bundlePath: 'specs/dist/openapi.json', specVersion: '1.0.0', packageName: '@capi/openapi-types' })
 */
export function generatedHeader({ specPath, bundlePath, specVersion, packageName }) {
  return [
    '// This file is generated. Do not edit it by hand.',
    `// Source: ${specPath}${specVersion ? ` (info.version ${specVersion})` : ''}, read from ${bundlePath}.`,
    `// Regenerate: pnpm gen at the repository root (it bundles the specs first, then runs the gen of ${packageName}; pnpm build runs it too).`,
    '',
  ].join('\n');
}
