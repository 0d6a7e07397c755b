/**
 * The step family on PostgreSQL (steps.ts, decision 0254). A step is one transaction on one
 * pooled client: BEGIN, the step function's own statements (through `tx`), the guarded record
 * (JobStepRecord), COMMIT: three round trips beyond the function's own, as few as a
 * transaction that records anything can take. The client is held while the function runs.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { ConflictError } from '../../core/errors.js';
import type { JobStep } from '../../core/types.js';
import {
  CommitEffects,
  stepValueText,
  type JobSleepParams,
  type JobStepOutcome,
  type JobStepRunParams,
  type StepOperations,
  type StepTransaction,
} from '../steps.js';
import { rollBackAndRelease, type PgContext } from './context.js';
import { mapPgError } from './pg-errors.js';
import { toSafeInteger } from './rows.js';
import { stepQueries, type StepQueries } from './step-queries.js';

interface StepRow {
  name: string;
  value: unknown;
  generation: string;
  recorded_at: Date;
}

export class PostgresSteps implements StepOperations {
  private readonly sql: StepQueries;
  private record: { name: string; text: string };

  constructor(private readonly ctx: PgContext) {
    this.sql = stepQueries(ctx.quotedSchema);
    this.record = { name: 'JobStepRecord', text: this.sql.JobStepRecord };
  }

  /** The guarded record statement (PostgresEngine.stepRecordStatement): its default text. */
  get defaultRecordStatement(): string {
    return this.sql.JobStepRecord;
  }

  /**
   * Replaces the record statement (same parameters). Its prepared statement is named after its
   * text, so two texts never share a name on one connection.
   */
  useRecordStatement(text: string): void {
    if (text === this.sql.JobStepRecord) return;
    const hash = createHash('sha1').update(text).digest('hex').slice(0, 8);
    this.record = { name: `JobStepRecord_${hash}`, text };
  }

  async jobSteps(p: { id: number }): Promise<JobStep[]> {
    const rows = await this.ctx.query<StepRow>('JobSteps', this.sql.JobSteps, [p.id]);
    return rows.map((row) => ({
      name: row.name,
      value: row.value,
      generation: toSafeInteger(row.generation, 'job_steps.generation'),
      recordedAt: row.recorded_at,
    }));
  }

  async jobStepRun(p: JobStepRunParams): Promise<JobStepOutcome> {
    this.ctx.assertOpen();
    let client: pg.PoolClient;
    try {
      client = await this.ctx.pool.connect();
    } catch (error) {
      throw mapPgError(error, 'JobStepRun');
    }
    const effects = new CommitEffects();
    const tx = new PgStepTransaction(client, effects);
    let inBody = false;
    let recordedAt: Date;
    let text: string;
    try {
      await client.query('BEGIN');
      inBody = true;
      const value = await p.body(tx);
      inBody = false;
      tx.seal();
      text = stepValueText(value);
      const rows = await this.ctx.clientQuery<{ recorded_at: Date }>(
        client,
        this.record.name,
        this.record.text,
        [p.ref.id, p.ref.generation, p.workerId, p.name, text, this.ctx.pinnedNow()],
      );
      if (rows.length === 0) {
        // Not ours any more (or recorded by another run): nothing the function wrote commits.
        effects.discard();
        await client.query('ROLLBACK');
        client.release();
        return { recorded: false };
      }
      recordedAt = rows[0]!.recorded_at;
      await client.query('COMMIT');
    } catch (error) {
      tx.seal();
      effects.discard();
      await rollBackAndRelease(client, error);
      // The function's own error (its SQL's too) is the caller's, as thrown.
      throw inBody ? error : mapPgError(error, 'JobStepRun');
    }
    client.release();
    effects.commit();
    return { recorded: true, value: JSON.parse(text) as unknown, recordedAt };
  }

  async jobSleep(p: JobSleepParams): Promise<{ until: Date } | null> {
    const rows = await this.ctx.query<{ available_at: Date }>('JobSleep', this.sql.JobSleep, [
      p.ref.id,
      p.ref.generation,
      p.workerId,
      p.name,
      p.delayMs,
      this.ctx.pinnedNow(),
      this.ctx.notifyChannel,
    ]);
    return rows[0] ? { until: rows[0].available_at } : null;
  }
}

/**
 * The step function's view of the step's transaction. Once the function has returned its client
 * goes back to the pool, so a `tx` kept past it refuses to run anything on a connection that is
 * now someone else's.
 */
class PgStepTransaction implements StepTransaction {
  private sealed = false;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly effects: CommitEffects,
  ) {}

  query(text: string, values?: unknown[]): Promise<pg.QueryResult> {
    if (this.sealed)
      return Promise.reject(
        new ConflictError('the step is over: its transaction can no longer be used'),
      );
    return this.client.query(text, values);
  }

  onCommit(effect: () => void): void {
    this.effects.add(effect);
  }

  seal(): void {
    this.sealed = true;
    this.effects.seal();
  }
}
