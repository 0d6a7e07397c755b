// The step record's guard is what refuses a stale run: an engine whose record statement is
// overridden without it (as the chaos harness's broken variant will be) records a stale step,
// and the real engine, on the same schema, refuses the same call. The override seam works.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

class UnguardedStepEngine extends PostgresEngine {
  protected override stepRecordStatement(_guarded: string, s: string): string {
    // Deliberately unguarded: any job, any worker, any generation, expired or not.
    return `INSERT INTO ${s}.job_steps (job_id, name, value, generation, recorded_at)
      SELECT $1::bigint, $4::text, $5::jsonb, $2::bigint, coalesce($6::timestamptz, now())
      WHERE $3::text IS NOT NULL
      RETURNING recorded_at`;
  }
}

describe('step record statement override', () => {
  it('records a stale step without the guard; the real engine refuses it', () =>
    withSchema('step record override', async ({ engine, url, schema }) => {
      const guarded = await engine();
      const [enqueued] = await guarded.jobEnqueue({
        jobs: [{ queue: 'q', payload: {}, maxAttempts: 3 }],
      });
      const [claimed] = await guarded.jobClaimBatch({
        queues: ['q'],
        workerId: 'w1',
        limit: 1,
        leaseTtlMs: 60_000,
      });
      assert.equal(claimed?.id, enqueued!.job.id);
      const stale = {
        workerId: 'someone-else',
        ref: { id: claimed!.id, generation: claimed!.generation },
        body: async () => 'stale',
      };
      assert.deepEqual(await guarded.jobStepRun({ ...stale, name: 'a' }), { recorded: false });

      const broken = new UnguardedStepEngine({ connectionString: url, schema, poolSize: 2 });
      try {
        const outcome = await broken.jobStepRun({ ...stale, name: 'a' });
        assert.equal(outcome.recorded, true, 'the unguarded record took the stale step');
      } finally {
        await broken.close();
      }
      assert.deepEqual(
        (await guarded.jobSteps({ id: claimed!.id })).map((s) => s.name),
        ['a'],
      );
    }));
});
