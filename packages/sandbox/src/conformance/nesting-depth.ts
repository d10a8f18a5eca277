/**
 * How deeply a user or an event may nest its values. Real users and events nest 4 levels at
 * most; the sandbox copies, clones and serialises them recursively, and a value nested
 * thousands of levels deep (well within a 1 MiB body) overflows the stack there.
 */
export const MAX_NESTING_DEPTH = 32;

/**
 * Whether `value` nests objects or arrays more than `maxDepth` levels deep. Iterative, so
 * that the check itself cannot overflow the stack; each object is visited once.
 */
export function nestsDeeperThan(value: unknown, maxDepth: number = MAX_NESTING_DEPTH): boolean {
  const seen = new Set<object>();
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (typeof current !== 'object' || current === null || seen.has(current)) continue;
    if (depth >= maxDepth) return true;
    seen.add(current);
    for (const child of Object.values(current)) pending.push([child, depth + 1]);
  }
  return false;
}
