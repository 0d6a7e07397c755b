/**
 * Enqueue on PostgreSQL: one statement per call (`JobEnqueueUnkeyed` when no job has a key,
 * `JobEnqueue` with its dedup otherwise), the race a dedup key can lose against a concurrent
 * enqueue, and the coalescing of notifications between overlapping enqueues (decision 0203).
 */
import { ConflictError } from '../../core/errors.js';
import type { CallerTransaction } from '../types.js';
import { newJob, type EnqueueOutcome, type JobEnqueueParams, type JobSpec } from '../jobs.js';
import { answerGroup, groupByKey, replaces } from '../enqueue-groups.js';
import type { PgContext } from './context.js';
import { enqueueQueries, type EnqueueQueries } from './enqueue-queries.js';
import { mapJob, type JobRow } from './job-rows.js';
import { toSafeInteger } from './rows.js';
import { NotifyCoalescer } from './notify-coalescer.js';

/** How often enqueue asks again for keys whose live job a concurrent enqueue committed. */
const ENQUEUE_RUNS = 3;

/** JobEnqueue's answer rows; JobEnqueueReplacing's also say `replaced` and whether it `wakes`. */
type EnqueueRow = JobRow & { o: number; created: boolean; replaced?: boolean; wakes?: boolean };
/** JobEnqueueUnkeyed's answer: what the database decided for each new job, in input order. */
type InsertedRow = { id: string; created_at: Date; available_at: Date };
type InsertedValues = [id: string, createdAt: Date, availableAt: Date];

export class PostgresEnqueue {
  /** Enqueues in flight outside a caller's transaction: more than one, and they coalesce. */
  private enqueuesInFlight = 0;
  private readonly notifications: NotifyCoalescer;
  private readonly sql: EnqueueQueries;

  constructor(private readonly ctx: PgContext) {
    this.sql = enqueueQueries(ctx.quotedSchema);
    this.notifications = new NotifyCoalescer(
      async (queues) => {
        await this.ctx.query('JobNotify', this.sql.JobNotify, [this.ctx.notifyChannel, queues]);
      },
      () => {}, // a hint lost: the workers' polling finds the jobs
    );
  }

  /** Sends the notifications still owed. */
  flushNotifications(): Promise<void> {
    return this.notifications.drain();
  }

  /**
   * One row per (queue, key) is sent (enqueue-groups.ts), through `JobEnqueue`, or through
   * `JobEnqueueReplacing` when a group replaces. A key whose conflicting job was committed by a
   * concurrent enqueue after the statement's snapshot gets no row back (DO NOTHING returns
   * nothing, and the snapshot cannot see that job), and a replacing row may be answered with a
   * job its snapshot still saw pending (a worker claimed it meanwhile): such rows are sent
   * again, and a fresh snapshot finds the job as it now is (`settled`).
   */
  async jobEnqueue(p: JobEnqueueParams): Promise<EnqueueOutcome[]> {
    if (p.jobs.length === 0) {
      this.ctx.assertOpen(); // a closed engine still refuses the call
      return [];
    }
    if (p.jobs.every((spec) => spec.key == null)) return this.enqueueUnkeyed(p);
    const groups = groupByKey(p.jobs);
    const replacing = groups.some((group) => replaces(group.spec));
    const statement = replacing ? 'JobEnqueueReplacing' : 'JobEnqueue';
    let unresolved = groups.map((_, g) => g);
    const answers = new Map<number, EnqueueOutcome>();
    await this.announcing(p.tx, async (channel, woken) => {
      for (let run = 0; unresolved.length > 0 && run < ENQUEUE_RUNS; run++) {
        const input = unresolved.map((g) => specJson(g, groups[g]!.spec, replacing));
        const rows = await this.ctx.query<EnqueueRow>(
          statement,
          this.sql[statement],
          [JSON.stringify(input), this.ctx.pinnedNow(), channel],
          p.tx,
        );
        // Rows come ordered by ordinal, a written row first: the first row of an ordinal wins.
        for (const row of rows) {
          if (row.wakes ?? row.created) woken.add(row.queue);
          if (answers.has(row.o)) continue;
          const answer = {
            job: mapJob(row),
            created: row.created,
            replaced: row.replaced === true,
          };
          if (settled(groups[row.o]!.spec, answer)) answers.set(row.o, answer);
        }
        unresolved = unresolved.filter((g) => !answers.has(g));
      }
    });
    if (unresolved.length > 0) {
      const spec = groups[unresolved[0]!]!.spec;
      throw new ConflictError(
        `the live job of queue "${spec.queue}" with key "${spec.key}" kept changing during enqueue; retry`,
        { queue: spec.queue, key: spec.key },
      );
    }
    const out: EnqueueOutcome[] = [];
    groups.forEach((group, g) => answerGroup(group, p.jobs, answers.get(g)!, out));
    return out;
  }

  /**
   * No job has a key: one plain INSERT, every job created. Its answer row k (id order) is the
   * job of spec k (input order), made from the spec and what the database decided (newJob).
   */
  private async enqueueUnkeyed(p: JobEnqueueParams): Promise<EnqueueOutcome[]> {
    const rows = await this.announcing(p.tx, async (channel, created) => {
      const values = [
        JSON.stringify(p.jobs.map((spec, i) => specJson(i, spec))),
        this.ctx.pinnedNow(),
        channel,
      ];
      const { JobEnqueueUnkeyed: sql } = this.sql;
      // A bulk enqueue's answer is thousands of rows: outside a caller's transaction they come
      // as arrays of values, sparing node-postgres an object per row (as the claim does).
      const inserted = p.tx
        ? (await this.ctx.query<InsertedRow>('JobEnqueueUnkeyed', sql, values, p.tx)).map(
            (r): InsertedValues => [r.id, r.created_at, r.available_at],
          )
        : ((await this.ctx.queryValues('JobEnqueueUnkeyed', sql, values)) as InsertedValues[]);
      for (const spec of p.jobs) created.add(spec.queue);
      return inserted;
    });
    if (rows.length !== p.jobs.length)
      throw new Error(`JobEnqueueUnkeyed answered ${rows.length} rows for ${p.jobs.length} jobs`);
    return rows.map(([id, createdAt, availableAt], k) => ({
      job: newJob(p.jobs[k]!, toSafeInteger(id, 'jobs.id'), createdAt, availableAt),
      created: true,
      replaced: false,
    }));
  }

  /**
   * Runs an enqueue's statements with the notify channel they should use. Beside another enqueue
   * (outside a caller's transaction) that is none: they commit without NOTIFY, and the queues
   * they add to `created` are announced after (notify-coalescer.ts), also after a failed
   * statement, since the statements before it are committed.
   */
  private async announcing<T>(
    tx: CallerTransaction | undefined,
    run: (channel: string | null, created: Set<string>) => Promise<T>,
  ): Promise<T> {
    const coalesce = !tx && this.enqueuesInFlight > 0;
    const created = new Set<string>();
    if (!tx) this.enqueuesInFlight++;
    try {
      return await run(coalesce ? null : this.ctx.notifyChannel, created);
    } finally {
      if (!tx) this.enqueuesInFlight--;
      if (coalesce) this.notifications.announce(created);
    }
  }
}

/**
 * Whether an answer is final: a job created or replaced, or a live job kept as the spec asks. A
 * replacing spec answered with a pending job met one a worker claimed after the snapshot; a
 * debounce answered with an unchanged job met a running one it could not take the key from.
 */
function settled(spec: JobSpec, answer: EnqueueOutcome): boolean {
  if (answer.created || answer.replaced || !replaces(spec)) return true;
  return answer.job.status === 'processing' && spec.debounce !== true;
}

/** One element of the JobEnqueue input (the jsonb_to_recordset columns; flows add theirs). */
export function specJson(o: number, spec: JobSpec, replacing = false): Record<string, unknown> {
  const json: Record<string, unknown> = {
    o,
    queue: spec.queue,
    type: spec.type ?? null,
    key: spec.key ?? null,
    // Through JSON as jsonb stores it: undefined becomes null, a Date its ISO string.
    payload: spec.payload ?? null,
    headers: spec.headers ?? {},
    partition_key: spec.partitionKey ?? null,
    priority: spec.priority ?? 0,
    run_at: spec.runAt ? spec.runAt.toISOString() : null,
    delay_ms: spec.delayMs ?? 0,
    max_attempts: spec.maxAttempts,
    timeout_ms: spec.timeoutMs ?? null,
  };
  if (replacing) {
    json.replace = replaces(spec);
    json.debounce = spec.debounce === true;
  }
  return json;
}
