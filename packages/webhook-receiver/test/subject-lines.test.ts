import { describe, expect, it } from 'vitest';
import { createSubjectLines, type InLine, type SubjectLines } from '../src/pipeline/subject-lines.js';

// Whether a pause ends before the event loop turns (a wake-up), or is still running (it would
// end only at its timer). The pause is long: a delivery that was not woken would sit it out.
async function endsAtOnce(lines: SubjectLines, subject: string, waiterId: string): Promise<boolean> {
  const place = placeOf.get(waiterId) ?? lines.join(subject, waiterId);
  placeOf.set(waiterId, place);
  const pause = place.pause(60_000).then(() => true);
  const stillPaused = new Promise<false>((resolve) => setImmediate(() => resolve(false)));
  const woken = await Promise.race([pause, stillPaused]);
  // Ends a pause left running (and its timer).
  if (!woken) lines.wake(subject, waiterId);
  await pause;
  return woken;
}
const placeOf = new Map<string, InLine>();

describe('subject lines: wake-ups from a store shared by processes', () => {
  it('wakes a waiter in line by its id, and no other', async () => {
    const lines = createSubjectLines();
    const first = lines.waiter(1000);
    const second = lines.waiter(1000);
    placeOf.set(first.id, lines.join('kyc.status.changed:u1', first.id));
    placeOf.set(second.id, lines.join('kyc.status.changed:u1', second.id));
    lines.wake('kyc.status.changed:u1', second.id);
    expect(await endsAtOnce(lines, 'kyc.status.changed:u1', second.id)).toBe(true);
    expect(await endsAtOnce(lines, 'kyc.status.changed:u1', first.id)).toBe(false);
  });

  it("keeps a wake-up that comes before its waiter joined (the store's processing answer still on its way)", async () => {
    const lines = createSubjectLines();
    const waiter = lines.waiter(1000);
    lines.wake('kyc.status.changed:u1', waiter.id);
    expect(await endsAtOnce(lines, 'kyc.status.changed:u1', waiter.id)).toBe(true);
    // Consumed: its next pause runs.
    expect(await endsAtOnce(lines, 'kyc.status.changed:u1', waiter.id)).toBe(false);
  });

  it("keeps no wake-up for another process's waiter, and drops the oldest past 64", async () => {
    const lines = createSubjectLines();
    const other = createSubjectLines();
    const theirs = other.waiter(1000);
    lines.waiter(1000);
    lines.wake('kyc.status.changed:u1', theirs.id);
    // Neither the other receiver (the wake-up went to this one) nor this one wakes it.
    expect(await endsAtOnce(other, 'kyc.status.changed:u1', theirs.id)).toBe(false);

    const waiters = Array.from({ length: 65 }, () => lines.waiter(1000));
    for (const waiter of waiters) lines.wake('kyc.status.changed:u2', waiter.id);
    expect(await endsAtOnce(lines, 'kyc.status.changed:u2', waiters[0]!.id)).toBe(false);
    expect(await endsAtOnce(lines, 'kyc.status.changed:u2', waiters[1]!.id)).toBe(true);
    expect(await endsAtOnce(lines, 'kyc.status.changed:u2', waiters[64]!.id)).toBe(true);
  });
});
