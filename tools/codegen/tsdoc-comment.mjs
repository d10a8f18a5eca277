/**
 * A TSDoc block for generated code, indented by `indent`; `*\/` inside the text is
 * broken up so a description can never end the comment early.
 *
 * @param {string | undefined} text
 * @param {string} [indent]
 * @returns {string} the comment followed by a newline, or '' when there is no text
 * @example
 * tsdocComment('The user.') // '/** The user. *\/\n'
 */
export function tsdocComment(text, indent = '') {
  const lines = (text ?? '').trim().replaceAll('*/', '*\\/').split('\n').map((line) => line.trimEnd());
  if (lines.length === 1 && lines[0] === '') return '';
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((line) => `${indent} *${line ? ` ${line}` : ''}`).join('\n')}\n${indent} */\n`;
}

/**
 * A schema's description followed by its first example as a TSDoc `@example` (pretty
 * JSON), the text for `tsdocComment`.
 *
 * @param {{ description?: string, examples?: unknown[] } | undefined} schema
 * @returns {string | undefined}
 * @example
 * describeWithExample({ description: 'A wallet.', examples: [{ address: '0x1' }] })
 */
export function describeWithExample(schema) {
  const example = Array.isArray(schema?.examples) && schema.examples.length > 0
    ? `@example\n${JSON.stringify(schema.examples[0], null, 2)}`
    : undefined;
  return [schema?.description?.trim(), example].filter(Boolean).join('\n\n') || undefined;
}
