/**
 * Lets the process exit while `timer` is pending: `unref()` on Node and Bun, `Deno.unrefTimer`
 * on Deno; nothing where timers do not hold a process (workerd).
 */
export function unrefTimer(timer: ReturnType<typeof setTimeout>): void {
  if (typeof timer === 'object' && typeof (timer as { unref?: unknown }).unref === 'function') (timer as { unref: () => void }).unref();
  else (globalThis as { Deno?: { unrefTimer?: (id: unknown) => void } }).Deno?.unrefTimer?.(timer);
}
