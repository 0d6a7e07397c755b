/**
 * A queue worker (and a maintainer, as every instance should run one). Its handler writes the
 * job's effect in a transaction, then works, then completes the job in that same transaction.
 * The work deliberately ignores the job's signal: a worker paused between its check and its
 * write (a GC pause, SIGSTOP) is exactly what the database's generation guard must fence.
 *
 * The same handler serves the run's limited queues (flow control: concurrency, per key, rate),
 * each through a worker of its own whose local concurrency is above the queue's cap, so that
 * only the database's claim keeps the fleet within the limits. The completing transaction reads
 * the database clock before its COMMIT, for the limit-exceeded checker.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { checkout } from '../checkout.js';
import type { ChildConfig } from '../config.js';
import type { IncrementTarget } from '../fenced-increment.js';
import { startWorkerProcess } from './worker-start.js';

type Handler = Parameters<IncrementTarget['lh']['worker']>[0]['handler'];

export async function runWorker(config: ChildConfig, target: IncrementTarget): Promise<void> {
  const { lh, pool, schema, emit } = target;
  const workerId = `${config.proc}#${config.incarnation}`;
  const handler: Handler = async (job, ctx) => {
    const generation = ctx.token;
    emit({ type: 'job', phase: 'started', jobId: job.id, generation });
    const workMs = Number((job.payload as { workMs?: number } | null)?.workMs ?? 100);
    const { client, release } = await checkout(pool);
    let broken = false;
    try {
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO "${schema}".chaos_effects (job_id, generation, worker) VALUES ($1, $2, $3)`,
        [job.id, generation, workerId],
      );
      await sleep(workMs); // deaf to ctx.signal on purpose (see above)
      emit({ type: 'job', phase: 'complete-invoke', jobId: job.id, generation });
      try {
        await ctx.complete(client);
      } catch (error) {
        emit({ type: 'job', phase: 'complete-refused', jobId: job.id, generation });
        throw error;
      }
      // Before the COMMIT that frees the job's slot: an instant the run surely still held it.
      const { rows } = await client.query<{ at: Date }>('SELECT clock_timestamp() AS at');
      await client.query('COMMIT');
      emit({
        type: 'job',
        phase: 'complete-ok',
        jobId: job.id,
        generation,
        dbAt: rows[0]!.at.getTime(),
      });
    } catch (error) {
      await client.query('ROLLBACK').catch(() => (broken = true));
      throw error;
    } finally {
      release(broken);
    }
  };
  const workers = [config.worker, ...config.worker.limited].map((served, i) =>
    lh.worker({
      // One id per worker instance (the workers table has a row each).
      id: i === 0 ? workerId : `${workerId}/${served.queue}`,
      queues: served.queue,
      concurrency: served.concurrency,
      leaseTtl: config.worker.leaseTtlMs,
      pollInterval: 200,
      retryBackoff: { baseMs: 20, capMs: 200 },
      handler,
    }),
  );
  await startWorkerProcess(lh, workers);
}
