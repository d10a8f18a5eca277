// Markdown of the guides and of spec descriptions, rendered with marked. Raw HTML inside
// markdown is escaped: descriptions come from specs, and nothing in them should be able to
// pull a remote resource into the offline site.
import { Marked } from 'marked';
import { escapeHtml } from './escape-html.mjs';

const marked = new Marked({
  gfm: true,
  renderer: {
    html({ text }) {
      return escapeHtml(text);
    },
  },
});

/**
 * Markdown to HTML.
 * @param {string | undefined} source
 * @returns {string}
 */
export function renderMarkdown(source) {
  return source ? /** @type {string} */ (marked.parse(source, { async: false })) : '';
}

/**
 * One line of markdown (code spans, emphasis, links) to inline HTML.
 * @param {string | undefined} source
 * @returns {string}
 */
export function renderInlineMarkdown(source) {
  return source ? /** @type {string} */ (marked.parseInline(source, { async: false })) : '';
}
