// Maps a JSON path of a parsed YAML file back to the line and column where it is written.
import { readFileSync } from 'node:fs';
import { isAlias, isMap, isSeq, LineCounter, parseDocument } from 'yaml';

/** Returns `locate(path) -> { line, column }` for `file` (the deepest node found on `path`). */
export function yamlLocator(file) {
  const lineCounter = new LineCounter();
  const document = parseDocument(readFileSync(file, 'utf8'), { lineCounter });
  return (path) => {
    let node = document.contents;
    let found = node;
    for (const key of path) {
      if (isAlias(node)) node = node.resolve(document);
      if (isMap(node)) {
        const pair = node.items.find((item) => String(item.key?.value ?? item.key) === String(key));
        if (!pair) break;
        found = pair.key ?? pair.value;
        node = pair.value;
      } else if (isSeq(node)) {
        node = node.items[Number(key)];
        if (!node) break;
        found = node;
      } else {
        break;
      }
    }
    const offset = found?.range?.[0] ?? 0;
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
}
