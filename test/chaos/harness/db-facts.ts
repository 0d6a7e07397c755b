/**
 * The database facts the checkers judge, read once every child has stopped. Leak facts are read
 * after a short grace period, because a server notices a closed client socket only when it next
 * reads from it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type { DbFacts } from '../history.js';

export interface FactSources {
  pool: pg.Pool;
  schema: string;
  /** The run's queues: the jobs of these are the run's. */
  queues: string[];
  /**
   * Client ports of every connection the proxy ever opened to the server; null when the server
   * cannot see them (behind haproxy), and then every `leasehold%` session of the database counts.
   */
  proxyPorts: (() => number[]) | null;
  proxyOpenConnections: () => number;
  children: { proc: string; pid: number }[];
  /** The workflow role's queue, whose jobs and step rows the step-once checker judges. */
  workflowQueue?: string;
}

export async function readDbFacts(src: FactSources, graceMs = 5_000): Promise<DbFacts> {
  const s = `"${src.schema}"`;
  // A few tries: behind haproxy an idle connection of the pool may lead to a server the last
  // promotion restarted (every read here is repeatable).
  const q = async <R extends pg.QueryResultRow>(
    text: string,
    values: unknown[] = [],
  ): Promise<R[]> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await src.pool.query<R>(text, values)).rows;
      } catch (error) {
        if (attempt >= 5 || (error as { code?: string }).code?.match(/^(42|22|23)/)) throw error;
        await sleep(500);
      }
    }
  };
  const jobs = await q<{ id: string; status: string; generation: string }>(
    `SELECT id, status, generation FROM ${s}.jobs WHERE queue = ANY($1::text[]) ORDER BY id`,
    [src.queues],
  );
  const effects = await q<{ job_id: string; generation: string; worker: string }>(
    `SELECT job_id, generation, worker FROM ${s}.chaos_effects`,
  );
  const counters = await q<{ scope: string; value: string }>(
    `SELECT scope, value FROM ${s}.chaos_counters`,
  );
  const ledger = await q<{ seq: string; scope: string; op_id: string; token: string }>(
    `SELECT seq, scope, op_id, token FROM ${s}.chaos_ledger ORDER BY seq`,
  );
  const storedTokens = await q<{
    family: 'lease' | 'lock' | 'session';
    resource: string;
    token: string;
  }>(
    `SELECT 'lease' AS family, resource, token FROM ${s}.leases
     UNION ALL SELECT 'lock', name, token FROM ${s}.lease_locks
     UNION ALL SELECT 'session', '*', CASE WHEN is_called THEN last_value ELSE last_value - 1 END
       FROM ${s}.session_lock_tokens`,
  );
  const workflowJobs = src.workflowQueue
    ? await q<{ id: string; status: string; generation: string }>(
        `SELECT id, status, generation FROM ${s}.jobs WHERE queue = $1 ORDER BY id`,
        [src.workflowQueue],
      )
    : undefined;
  const steps = src.workflowQueue
    ? await q<{
        job_id: string;
        step: string;
        generation: string;
        seen_generation: string;
        unfinished_children: number | null;
      }>(`SELECT * FROM ${s}.chaos_steps ORDER BY job_id, step`)
    : undefined;
  const runs = await q<{ name: string; slot: Date; proc: string }>(
    `SELECT name, slot, proc FROM ${s}.chaos_schedule_runs`,
  );

  const leakedConnections = async (): Promise<DbFacts['leakedConnections']> =>
    (
      await q<{ pid: number; application_name: string; state: string | null }>(
        `SELECT pid, application_name, state FROM pg_stat_activity
         WHERE datname = current_database() AND ($1::int[] IS NULL OR client_port = ANY($1::int[]))
           AND application_name LIKE 'leasehold%'`,
        [src.proxyPorts?.() ?? null],
      )
    ).map((r) => ({ pid: r.pid, application: r.application_name, state: r.state ?? '' }));
  const advisoryLocks = async (): Promise<number> =>
    Number(
      (
        await q<{ n: string }>(
          `SELECT count(*) AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database
           WHERE l.locktype = 'advisory' AND d.datname = current_database()`,
        )
      )[0]!.n,
    );
  const alive = (): DbFacts['leakedProcesses'] =>
    src.children.filter(({ pid }) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
  const deadline = Date.now() + graceMs;
  let connections = await leakedConnections();
  let locks = await advisoryLocks();
  let processes = alive();
  while (
    (connections.length > 0 ||
      locks > 0 ||
      processes.length > 0 ||
      src.proxyOpenConnections() > 0) &&
    Date.now() < deadline
  ) {
    await sleep(200);
    [connections, locks, processes] = [await leakedConnections(), await advisoryLocks(), alive()];
  }
  return {
    jobs: jobs.map((j) => ({
      id: Number(j.id),
      status: j.status,
      generation: Number(j.generation),
    })),
    effects: effects.map((e) => ({
      jobId: Number(e.job_id),
      generation: Number(e.generation),
      worker: e.worker,
    })),
    counters: counters.map((c) => ({ scope: c.scope, value: Number(c.value) })),
    ledger: ledger.map((l) => ({
      seq: Number(l.seq),
      scope: l.scope,
      opId: l.op_id,
      token: Number(l.token),
    })),
    scheduleRuns: runs.map((r) => ({ name: r.name, slot: r.slot.getTime(), proc: r.proc })),
    storedTokens: storedTokens.map((t) => ({ ...t, token: Number(t.token) })),
    leakedConnections: connections,
    leakedAdvisoryLocks: locks,
    leakedProcesses: processes,
    ...(workflowJobs && steps
      ? {
          workflowJobs: workflowJobs.map((j) => ({
            id: Number(j.id),
            status: j.status,
            generation: Number(j.generation),
          })),
          steps: steps.map((r) => ({
            jobId: Number(r.job_id),
            step: r.step,
            generation: Number(r.generation),
            seenGeneration: Number(r.seen_generation),
            unfinishedChildren: r.unfinished_children,
          })),
        }
      : {}),
  };
}
