// Every text that comes from a spec, a guide or a package name goes through here before it
// lands in HTML, so a description with "<" or a quote cannot break the page.
const entities = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Escapes text for HTML element content and attribute values.
 * @param {unknown} text
 * @returns {string}
 */
export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (char) => entities[/** @type {keyof typeof entities} */ (char)]);
}
