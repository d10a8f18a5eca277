/** A short phrase for the kind of a value, for error messages ("a number", "an object"). */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value !== 'object') return `a ${typeof value}`;
  const kind = (value as object).constructor;
  return kind && kind !== Object ? `a ${kind.name}` : 'an object';
}
