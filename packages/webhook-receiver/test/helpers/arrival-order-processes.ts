import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleReceiverProcess } from './receiver-processes.js';

/**
 * Bundles ./arrival-order-receiver-process.ts from the current source and returns the bundle's
 * path and a function that deletes it. Start it with `startReceiverProcess`.
 */
export async function bundleArrivalOrderReceiver(): Promise<{ bundle: string; remove(): void }> {
  const bundle = await bundleReceiverProcess(join(dirname(fileURLToPath(import.meta.url)), 'arrival-order-receiver-process.ts'));
  return { bundle, remove: () => rmSync(bundle, { force: true }) };
}

/** One line of a RECORD_FILE (see ./arrival-order-receiver-process.ts). */
export interface Recorded {
  readonly kind: 'start' | 'done' | 'superseded';
  readonly kycStatus: string;
  readonly pid: number;
}

/** What the receiver processes recorded so far, in order. */
export function readRecord(recordFile: string): Recorded[] {
  if (!existsSync(recordFile)) return [];
  return readFileSync(recordFile, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Recorded);
}
