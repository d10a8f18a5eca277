// Spectral: spectral:oas, spectral:asyncapi and the project's rules (specs/.spectral.yaml).
import { readFileSync } from 'node:fs';
import * as fs from 'node:fs';
import { relative, resolve } from 'node:path';
import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import { bundleAndLoadRuleset } from '@stoplight/spectral-ruleset-bundler/with-loader';
import spectralRuntime from '@stoplight/spectral-runtime';

const { Document, Spectral } = spectralCore;
const { Yaml, Json } = spectralParsers;

// Spectral's DiagnosticSeverity: 0 error, 1 warning, 2 information, 3 hint.
const SEVERITY = { 0: 'error', 1: 'warning' };

/** Loads a Spectral ruleset file (YAML, with its custom functions). */
export async function loadSpectralRuleset(rulesetFile) {
  return bundleAndLoadRuleset(resolve(rulesetFile), { fs, fetch: spectralRuntime.fetch });
}

/**
 * Lints each file (absolute paths) with `ruleset`; returns LintProblems whose file and line
 * are where the problem is written, also when it is in a $ref'd schema file.
 */
export async function lintWithSpectral(specsDir, ruleset, files) {
  const spectral = new Spectral();
  spectral.setRuleset(ruleset);
  const problems = [];
  for (const file of files) {
    const parser = file.endsWith('.json') ? Json : Yaml;
    const document = new Document(readFileSync(file, 'utf8'), parser, file);
    const results = await spectral.run(document);
    for (const result of results) {
      const severity = SEVERITY[result.severity];
      if (!severity) continue;
      problems.push({
        tool: 'spectral',
        rule: String(result.code),
        severity,
        file: relative(specsDir, result.source ?? file),
        line: result.range.start.line + 1,
        column: result.range.start.character + 1,
        message: `${result.message}${result.path.length ? ` (at ${result.path.join('.')})` : ''}`,
      });
    }
  }
  return problems;
}
