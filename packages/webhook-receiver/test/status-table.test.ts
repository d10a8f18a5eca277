import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RECEIVER_OUTCOMES } from '../src/status-table.js';

describe('every failure maps to one HTTP status in one table, repeated in the README', () => {
  it('lists in the README exactly the outcomes and statuses of RECEIVER_OUTCOMES, in the same order', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const table = readme.slice(readme.indexOf('<!-- status-table:start -->'), readme.indexOf('<!-- status-table:end -->'));
    const rows = [...table.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map(([, code, status]) => [code, Number(status)]);
    expect(rows).toEqual(Object.entries(RECEIVER_OUTCOMES).map(([code, { status }]) => [code, status]));
  });

  it('acknowledges only what a retry cannot improve, and retries what it can', () => {
    const statusOf = (code: keyof typeof RECEIVER_OUTCOMES) => RECEIVER_OUTCOMES[code].status;
    expect(statusOf('unknown_event_type')).toBeLessThan(300);
    expect(statusOf('duplicate')).toBeLessThan(300);
    for (const retried of ['handler_failed', 'dedupe_store_unavailable', 'public_key_unavailable', 'body_already_consumed', 'duplicate_in_progress'] as const) {
      expect(statusOf(retried)).toBeGreaterThanOrEqual(300);
    }
  });
});
