// `leasehold status` counts every active lease: it listed at most 1,000 and printed the length,
// so a fleet with more showed 1,000 (issue 21, item 7, like the leases_active gauge). On
// PostgreSQL, through runCli in process.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { runCli } from '../../src/cli/main.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

describe('leasehold status', () => {
  it('counts every active lease, beyond a thousand, and not the released ones', () =>
    withSchema('cli status', async ({ engine, url, schema }) => {
      const e = await engine();
      await e.leaseAcquireMany(
        Array.from({ length: 1_100 }, (_, i) => ({
          resource: `r${i}`,
          holder: 'a',
          ttlMs: 600_000,
        })),
      );
      assert.ok(await e.leaseRelease({ resource: 'r0', holder: 'a' }));
      const out = capture();
      const err = capture();
      const code = await runCli(['status', '--json', '--database-url', url, '--schema', schema], {
        out: out.stream,
        err: err.stream,
      });
      assert.equal(code, 0, err.text());
      const status = JSON.parse(out.text()) as { activeLeases: number };
      assert.equal(status.activeLeases, 1_099);
    }));
});
