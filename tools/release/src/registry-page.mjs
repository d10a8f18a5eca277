// What someone who only has the npm package meets: the registry page renders the README and
// links the manifest's repository, homepage and bugs. A relative link there is dead (the
// registry has no folder to resolve it in), and a tarball without LICENSE ships MIT code
// without the licence text. These checks read the packed tarball, exactly what is published.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** The docs site (guides, API and event reference, one page per package). One constant for every link to it. */
export const docsSiteUrl = 'https://docs.capi.dev';

/** The source repository on the forge. */
export const repositoryUrl = 'https://github.com/capi-dev/capi';

/**
 * The metadata a published package's manifest must carry, for the package in `packages/<dirName>`.
 * @param {string} dirName the package's folder under packages/
 */
export function expectedMetadata(dirName) {
  return {
    repository: { type: 'git', url: `git+${repositoryUrl}.git`, directory: `packages/${dirName}` },
    homepage: `${docsSiteUrl}/packages/${dirName}/`,
    bugs: { url: `${repositoryUrl}/issues` },
  };
}

/**
 * The link targets of a Markdown document outside code: inline links and images, reference
 * definitions, and `href`/`src` of inline HTML.
 * @param {string} markdown
 * @returns {string[]}
 */
export function markdownLinkTargets(markdown) {
  const prose = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
  const targets = [];
  for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]);
  for (const match of prose.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) targets.push(match[1]);
  for (const match of prose.matchAll(/\b(?:href|src)\s*=\s*["']([^"']+)["']/gi)) targets.push(match[1]);
  return targets;
}

/** A link that works on the registry page: absolute, mail, or an anchor on the same page. */
function worksOnRegistryPage(target) {
  return /^(https?:\/\/|mailto:|#)/i.test(target);
}

/**
 * Problems of an unpacked tarball (the `package/` folder) as the registry shows it.
 * @param {string} packageDir the unpacked `package/` folder
 * @param {{ dirName?: string }} [options] `dirName`: the package's folder under packages/, to
 *   check `repository.directory` and `homepage` against {@link expectedMetadata}
 * @returns {string[]} one line per problem, saying what to add or change
 */
export function registryPageProblems(packageDir, { dirName } = {}) {
  const manifest = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
  const problems = [];
  const expected = dirName ? expectedMetadata(dirName) : undefined;
  const repository = manifest.repository;
  if (typeof repository !== 'object' || !repository?.url || !repository?.directory) {
    problems.push(`package.json has no "repository" with "url" and "directory": add ${JSON.stringify(expected?.repository ?? { type: 'git', url: `git+${repositoryUrl}.git`, directory: 'packages/<dir>' })}`);
  } else if (expected && (repository.url !== expected.repository.url || repository.directory !== expected.repository.directory)) {
    problems.push(`package.json "repository" is ${JSON.stringify(repository)}: it must be ${JSON.stringify(expected.repository)}`);
  }
  if (typeof manifest.homepage !== 'string' || !manifest.homepage.startsWith(`${docsSiteUrl}/`)) {
    problems.push(`package.json "homepage" is ${JSON.stringify(manifest.homepage)}: it must be the package's page on the docs site, ${expected?.homepage ?? `${docsSiteUrl}/packages/<dir>/`}`);
  } else if (expected && manifest.homepage !== expected.homepage) {
    problems.push(`package.json "homepage" is ${manifest.homepage}: it must be ${expected.homepage}`);
  }
  if (typeof manifest.bugs?.url !== 'string' && typeof manifest.bugs !== 'string') {
    problems.push(`package.json has no "bugs": add { "url": "${repositoryUrl}/issues" }`);
  }
  if (!Array.isArray(manifest.keywords) || manifest.keywords.length === 0) {
    problems.push('package.json has no "keywords": add the words users search the registry with');
  }
  if (typeof manifest.license !== 'string' || manifest.license === '') {
    problems.push('package.json has no "license": add "MIT"');
  }
  if (manifest.publishConfig?.provenance !== true) {
    problems.push('package.json "publishConfig" lacks "provenance": true: add it, so the registry shows where and how the tarball was built');
  }
  const files = readdirSync(packageDir);
  if (!files.some((file) => /^LICEN[CS]E(\.(md|txt))?$/i.test(file))) {
    problems.push('the tarball has no LICENSE file: copy the repository\'s LICENSE into the package folder (npm packs it whatever "files" says)');
  }
  const readme = files.find((file) => /^readme(\.md)?$/i.test(file));
  if (!readme) {
    problems.push('the tarball has no README.md: the registry page would be empty');
    return problems;
  }
  const targets = markdownLinkTargets(readFileSync(path.join(packageDir, readme), 'utf8'));
  for (const target of targets.filter((link) => !worksOnRegistryPage(link))) {
    problems.push(`README.md links to "${target}", which is dead on the registry page: use an absolute URL (${repositoryUrl}/blob/main/..., ${docsSiteUrl}/..., or https://www.npmjs.com/package/<name>)`);
  }
  if (!targets.some((link) => link.startsWith(`${docsSiteUrl}/`))) {
    problems.push(`README.md does not link to the docs site: add a link to ${docsSiteUrl}/ (the guides) near the top`);
  }
  return problems;
}

