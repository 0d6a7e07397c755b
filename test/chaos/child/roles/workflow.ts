/**
 * The workflow role (issue 28): a worker whose jobs are workflows. A plain job runs three steps
 * with a short `ctx.sleep` between the second and the third; a flow parent (payload `parent`)
 * runs one step once its children are done. Each step writes one row through its transaction
 * with the writer's generation and the job's generation as that statement sees it (and, for a
 * parent, how many of its children were not completed), then works a little, deaf to the job's
 * signal: a process frozen mid-step and resumed after its job was taken must be stopped by the
 * step's guard, which the step-once checker judges from the rows.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildConfig } from '../config.js';
import type { IncrementTarget } from '../fenced-increment.js';
import { startWorkerProcess } from './worker-start.js';

export async function runWorkflow(config: ChildConfig, target: IncrementTarget): Promise<void> {
  const { lh, schema } = target;
  const s = `"${schema}"`;
  const row = `INSERT INTO ${s}.chaos_steps
      (job_id, step, generation, seen_generation, unfinished_children)
    SELECT $1, $2, $3, j.generation,
      CASE WHEN $4 THEN (SELECT count(*) FROM ${s}.jobs c
        WHERE c.parent_id = $1 AND c.status <> 'completed') END
    FROM ${s}.jobs j WHERE j.id = $1`;
  const worker = lh.worker({
    id: `${config.proc}#${config.incarnation}`,
    queues: config.workflow.queue,
    concurrency: config.workflow.concurrency,
    leaseTtl: config.workflow.leaseTtlMs,
    pollInterval: 200,
    retryBackoff: { baseMs: 20, capMs: 200 },
    handler: async (job, ctx) => {
      const payload = (job.payload ?? {}) as { workMs?: number; parent?: boolean };
      const workMs = payload.workMs ?? 100;
      const names = payload.parent ? ['gather'] : ['one', 'two', 'three'];
      for (const [i, name] of names.entries()) {
        if (i === 2) await ctx.sleep('pause', 50);
        await ctx.step(name, async (tx) => {
          // Work first, write last: a holder frozen in the work and resumed after its job was
          // taken writes with a generation the row's own statement sees superseded.
          await sleep(workMs);
          await tx.query(row, [job.id, name, ctx.token, payload.parent === true]);
          return name;
        });
      }
      return payload.parent ? (await ctx.childResults()).length : 'done';
    },
  });
  await startWorkerProcess(lh, [worker]);
}
