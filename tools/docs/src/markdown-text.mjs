// Text from the specs placed into generated VitePress markdown. VitePress compiles every page
// as a Vue template, so text must neither open an HTML tag nor a `{{ }}` interpolation, and a
// table cell must stay on one line.

/**
 * Spec prose (markdown) made safe for a VitePress page: raw `<` escaped outside code spans,
 * `{{` broken up so Vue does not interpolate it.
 * @param {string | undefined} text
 * @returns {string}
 */
export function prose(text) {
  if (!text) return '';
  return String(text)
    .split(/(`[^`]*`)/)
    .map((part, index) => (index % 2 === 1 ? part : part.replace(/</g, '&lt;')))
    .join('')
    .replace(/\{\{/g, '{<!-- -->{');
}

/**
 * Prose for one markdown table cell: one line, pipes escaped.
 * @param {string | undefined} text
 * @returns {string}
 */
export function cell(text) {
  return prose(text).replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}

/**
 * A fenced code block; the fence grows when the code itself holds backticks.
 * @param {string} language
 * @param {string} code
 * @returns {string}
 */
export function fence(language, code) {
  const longest = Math.max(2, ...[...code.matchAll(/`+/g)].map((match) => match[0].length));
  const marks = '`'.repeat(longest + 1);
  return `${marks}${language}\n${code.replace(/\n$/, '')}\n${marks}`;
}

/**
 * The anchor VitePress gives a heading (its slugify): lower case, runs of anything but
 * letters and digits turned into one dash.
 * @param {string} heading
 * @returns {string}
 */
export function anchorOf(heading) {
  return heading
    .normalize('NFKD')
    .replace(/[\u0300-\u036F]/g, '')
    .replace(/[\s~`!@#$%^&*()\-_+=[\]{}|\\;:"'“”‘’<>,.?/]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '')
    .replace(/^(\d)/, '_$1')
    .toLowerCase();
}

/**
 * Where an `x-assumption` decision comes from, said for partners: the Partner Interface
 * reference by section, the live service's observed behaviour for the maintainers' notes
 * (which are not published), never a file name.
 * @param {string | undefined} source
 * @returns {string}
 */
export function describeSource(source) {
  if (!source) return '';
  return String(source)
    .split(/;\s*/)
    .map((part) =>
      part
        .replace(/^service-facts\.md,?\s*(.*)$/i, (_, topic) => `observed behaviour of the live service${topic ? ` (${topic})` : ''}`)
        .replace(/^reference\b/i, 'Partner Interface reference'),
    )
    .join('; ');
}

/**
 * The `x-assumption` note of a spec node as a VitePress "info" box, or ''.
 * @param {any} node
 * @returns {string}
 */
export function assumptionBox(node) {
  const assumption = node?.['x-assumption'];
  if (!assumption) return '';
  const source = assumption.source ? `\n\n*Based on: ${prose(describeSource(assumption.source))}.*` : '';
  return `::: info Assumption\n${prose(assumption.decision)} *Why:* ${prose(assumption.reason)}${source}\n:::\n`;
}
