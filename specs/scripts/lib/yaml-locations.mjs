// Maps a JSON path of a parsed YAML file back to where it is written: its node (for its text
// range), its line and column.
import { readFileSync } from 'node:fs';
import { isAlias, isMap, isSeq, LineCounter, parseDocument } from 'yaml';

/**
 * Parses `file` once; `find(path)` is the node written at `path` (`undefined` when there is none)
 * and whether the path goes through an alias (`*anchor`: the value is written elsewhere);
 * `position(node)` its 1-based line and column; `text` the file's text (node ranges index it).
 */
export function yamlSource(file) {
  const text = readFileSync(file, 'utf8');
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter });
  /** The deepest node found on `path`, and whether all of `path` was found. */
  const walk = (path) => {
    let node = document.contents;
    let found = node;
    let aliased = false;
    for (const key of path) {
      if (isAlias(node)) {
        aliased = true;
        node = node.resolve(document);
      }
      if (isMap(node)) {
        const pair = node.items.find((item) => String(item.key?.value ?? item.key) === String(key));
        if (!pair) return { found, aliased, complete: false };
        found = pair.key ?? pair.value;
        node = pair.value;
      } else if (isSeq(node)) {
        node = node.items[Number(key)];
        if (!node) return { found, aliased, complete: false };
        found = node;
      } else {
        return { found, aliased, complete: false };
      }
    }
    return { found, node, aliased: aliased || isAlias(node), complete: true };
  };
  const position = (node) => {
    const { line, col } = lineCounter.linePos(node?.range?.[0] ?? 0);
    return { line, column: col };
  };
  return {
    text,
    find(path) {
      const { node, aliased, complete } = walk(path);
      return complete && node !== undefined && node !== null ? { node, aliased } : undefined;
    },
    position,
    /** Where the deepest node found on `path` is written (a key, when the path ends at a pair). */
    locate: (path) => position(walk(path).found),
  };
}

/** Returns `locate(path) -> { line, column }` for `file` (the deepest node found on `path`). */
export function yamlLocator(file) {
  return yamlSource(file).locate;
}
