// `pnpm sign:examples` (here: `pnpm --filter @capi/specs sign-examples`): signs every webhook
// example of the specs with the example signing key (examples/webhook-signing-key.pem) and writes
// its public half into the getWebhookPublicKey examples. Run it after adding or editing a webhook
// example (a new event, a changed body or timestamp); the lint refuses an example that does not
// verify. Only the signature and key values change in the files: their layout stays.
//   node scripts/sign-examples.mjs [<specs dir>] [--check]
//   --check  writes nothing; exits 1 when an example would change (a CI-style check)
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSpecOutputs } from './bundle.mjs';
import { readSigningKey, signingEdits, SIGNING_KEY_FILE } from './lib/signed-examples.mjs';

const specsDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Signs the examples of the specs in `dir`; resolves to the files it changed (none with `check`). */
export async function signExamples(dir = specsDir, { check = false } = {}) {
  const privateKey = readSigningKey(dir);
  if (privateKey === undefined) throw new Error(`${join(dir, SIGNING_KEY_FILE)} is missing: it is the example signing key (openssl genpkey -algorithm ed25519 makes one; a new key changes every example)`);
  const outputs = await buildSpecOutputs(dir);
  const parse = (file) => JSON.parse(outputs.get(file));
  const standaloneSchemas = new Map([...outputs.keys()].filter((file) => file.startsWith('schemas/')).map((file) => [file.slice('schemas/'.length, -'.json'.length), parse(file)]));
  const edits = signingEdits(dir, { openapi: parse('openapi.json'), asyncapi: parse('asyncapi.json'), standaloneSchemas }, privateKey);
  const files = [...new Set(edits.map((edit) => edit.file))].sort();
  if (check) return files;
  for (const file of files) {
    const path = join(dir, file);
    let text = readFileSync(path, 'utf8');
    // From the end, so that each range still points at the text it was read from.
    for (const edit of edits.filter((candidate) => candidate.file === file).sort((a, b) => b.start - a.start)) {
      text = text.slice(0, edit.start) + edit.text + text.slice(edit.end);
    }
    writeFileSync(path, text);
  }
  return files;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const dir = process.argv.slice(2).find((argument) => argument !== '--check') ?? specsDir;
  try {
    const files = await signExamples(dir, { check });
    if (check && files.length > 0) {
      console.log(`sign-examples: examples not signed with ${SIGNING_KEY_FILE} in ${files.join(', ')}: run pnpm sign:examples`);
      process.exitCode = 1;
    } else {
      console.log(files.length === 0 ? 'sign-examples: every example is signed already' : `sign-examples: signed the examples in ${files.join(', ')}; run pnpm gen to regenerate what reads them`);
    }
  } catch (error) {
    console.error(`sign-examples: ${error.message}`);
    process.exitCode = 1;
  }
}
