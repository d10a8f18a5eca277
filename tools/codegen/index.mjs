// @capi/codegen-kit: what the generators of @capi/openapi-types and @capi/event-types share.
// The vitest harnesses are in `@capi/codegen-kit/testing`, so a gen run never loads vitest.
export { GenerationError } from './generation-error.mjs';
export { generatedHeader } from './generated-header.mjs';
export { describeWithExample, tsdocComment } from './tsdoc-comment.mjs';
export { runGeneratorCli } from './run-generator-cli.mjs';
