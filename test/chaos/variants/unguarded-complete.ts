/**
 * Broken variant (a), for the chaos harness only: job completion without its ownership guard.
 * The real JobComplete accepts a completion only from the worker and generation that hold the
 * job's live lease; this one completes any job by id, so a worker that was paused past its lease
 * (the job rescued and claimed again meanwhile) still gets its stale completion accepted.
 */
import type { JobOperations } from '../../../src/engine/jobs.js';
import { PostgresEngine } from '../../../src/engine/postgres/postgres-engine.js';
import { quoteSchema } from '../../../src/engine/postgres/sql-identifiers.js';

export class UnguardedCompleteEngine extends PostgresEngine {
  override jobComplete: JobOperations['jobComplete'] = async (p) => {
    const s = quoteSchema(this.schema);
    // Deliberately unguarded: no generation, no claimed_by, no live lease, not even a status.
    const text = `UPDATE ${s}.jobs j SET status = 'completed', result = r.result, finished_at = now(),
        lease_expires_at = NULL, updated_at = now()
      FROM unnest($1::bigint[], $2::jsonb[]) AS r(id, result)
      WHERE j.id = r.id
      RETURNING j.id`;
    const values = [p.jobs.map((j) => j.id), p.jobs.map((j) => JSON.stringify(j.result ?? null))];
    const result = p.tx
      ? await p.tx.query(text, values)
      : await this.pool.query({ name: 'ChaosJobCompleteUnguarded', text, values });
    return (result.rows as { id: string }[]).map((row) => Number(row.id));
  };
}
