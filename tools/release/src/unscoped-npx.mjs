// npx with the bare bin name (capi-sandbox), in a project without @capi/sandbox installed, asks the public registry
// for the unscoped name `capi-sandbox`, which anyone can register. Every instruction names the
// package: `npx -p @capi/sandbox capi-sandbox`.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The commands of our packages' bins, which npx must never be asked for by their bare name. */
export const packageBins = { 'capi-sandbox': '@capi/sandbox' };

const npxOfBareBin = new RegExp(`\\bnpx\\s+(?:--?[\\w-]+(?:=\\S+)?\\s+)*(${Object.keys(packageBins).join('|')})\\b`, 'g');

/**
 * The places in a text that run one of our bins through npx by its bare name.
 * @param {string} text
 * @returns {{ line: number, command: string, fix: string }[]}
 */
export function unscopedNpxCommands(text) {
  const found = [];
  text.split('\n').forEach((line, index) => {
    for (const match of line.matchAll(npxOfBareBin)) {
      const bin = /** @type {keyof typeof packageBins} */ (match[1]);
      found.push({ line: index + 1, command: match[0], fix: `npx -p ${packageBins[bin]} ${bin}` });
    }
  });
  return found;
}

/**
 * Every committed text file of the repository (docs, READMEs, changesets, sources) that runs
 * one of our bins through npx by its bare name.
 * @param {string} root the repository root
 * @returns {string[]} one line per place: `file:line: command (write: fix)`
 */
export function unscopedNpxInRepository(root) {
  const files = execFileSync('git', ['ls-files', '-z', '--', '*.md', '*.ts', '*.mts', '*.mjs', '*.js', '*.json', '*.yaml', '*.yml', '*.html'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
  return files.flatMap((file) =>
    unscopedNpxCommands(readFileSync(path.join(root, file), 'utf8')).map((place) => `${file}:${place.line}: "${place.command}" (write "${place.fix}")`),
  );
}
