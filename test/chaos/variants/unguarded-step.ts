/**
 * Broken variant for the workflow checker (issue 28, decision 0256): a step recorded without its
 * ownership guard. The real record inserts the step only while the job is still the run's
 * (worker, generation, processing, lease unexpired) and holds the job row until its COMMIT;
 * this one records any step by job id, so a run frozen mid-step past its lease, resumed after
 * the job was rescued and claimed again, commits its step and the writes made through its `tx`.
 */
import { PostgresEngine } from '../../../src/engine/postgres/postgres-engine.js';

export class UnguardedStepEngine extends PostgresEngine {
  protected override stepRecordStatement(_guarded: string, quotedSchema: string): string {
    // Same parameters as the real statement ($3, the worker, is only typed: nothing checks it).
    return `INSERT INTO ${quotedSchema}.job_steps (job_id, name, value, generation, recorded_at)
      SELECT $1::bigint, $4::text, $5::jsonb, $2::bigint, coalesce($6::timestamptz, now())
      WHERE $3::text IS NOT NULL
      ON CONFLICT (job_id, name) DO NOTHING
      RETURNING recorded_at`;
  }
}
