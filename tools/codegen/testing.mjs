// @capi/codegen-kit/testing: the vitest harnesses every generated package runs with its own
// parameters. Import from a test file only (they call describe/it).
export { describeGeneratedFiles } from './testing/describe-generated-files.mjs';
export { describePublishedPackage } from './testing/describe-published-package.mjs';
export { describeReadmeExamples } from './testing/describe-readme-examples.mjs';
export { describeTypeTestCoverage } from './testing/describe-type-test-coverage.mjs';
export { readmeBlocks } from './testing/readme-blocks.mjs';
export { runTsc } from './testing/run-tsc.mjs';
export { temporaryDirectory } from './testing/temporary-directory.mjs';
