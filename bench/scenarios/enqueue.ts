/**
 * Enqueue: one bulk call with N jobs (leasehold's `enqueueMany`, graphile-worker's `addJobs`,
 * pg-boss's `insert`), and single enqueues from 8 concurrent callers, beside the floor of a
 * plain single-row INSERT through `pg` on 8 connections, without and with a pg_notify in the
 * same statement (an enqueue announces itself; PostgreSQL serialises the commits of
 * transactions that notified).
 */
import { roundRobin, type BenchSystem, type Family, type FamilyContext } from '../lib/family.js';
import { formatValue } from '../lib/format.js';
import { graphileBulkEnqueue, graphileSingleEnqueue } from '../peers/graphile.js';
import { pgBossBulkEnqueue, pgBossSingleEnqueue } from '../peers/pgboss.js';
import { rawInserts } from '../peers/raw-sql.js';
import { leaseholdBulkEnqueue, leaseholdSingleEnqueue } from './queue.js';

const CALLERS = 8;

function system(
  ctx: FamilyContext,
  id: string,
  label: string,
  measure: () => Promise<number>,
): BenchSystem {
  ctx.results.define({ id, family: 'enqueue', label, unit: 'jobs/s', better: 'higher' });
  return {
    name: label,
    run: async () => {
      const rate = await measure();
      ctx.results.add(id, rate);
      return `${formatValue(rate, 'jobs/s')} jobs/s`;
    },
  };
}

export const enqueueFamily: Family = {
  name: 'enqueue',
  title: 'Enqueue',
  about: ({ counts: c }) =>
    `Bulk: one call with ${c.bulkJobs.toLocaleString('en-US')} jobs. Single: one-job calls ` +
    `from ${CALLERS} concurrent callers for ${c.singleSeconds} s ` +
    `(each library on its default pool of 10; the raw INSERT on ${CALLERS} connections). ` +
    `Each caller first warms up (connections, prepared statements) untimed.`,
  async run(ctx) {
    const url = ctx.db.url;
    const { bulkJobs, singleSeconds } = ctx.counts;
    const systems = [
      system(ctx, 'enqueue.bulk.leasehold', 'bulk: leasehold enqueueMany', () =>
        leaseholdBulkEnqueue(url, bulkJobs),
      ),
      system(ctx, 'enqueue.bulk.graphile', 'bulk: graphile-worker addJobs', () =>
        graphileBulkEnqueue(url, bulkJobs),
      ),
      system(ctx, 'enqueue.bulk.pgBoss', 'bulk: pg-boss insert', () =>
        pgBossBulkEnqueue(url, bulkJobs),
      ),
      system(ctx, 'enqueue.single.leasehold', 'single: leasehold enqueue', () =>
        leaseholdSingleEnqueue(url, singleSeconds, CALLERS),
      ),
      system(ctx, 'enqueue.single.graphile', 'single: graphile-worker addJob', () =>
        graphileSingleEnqueue(url, singleSeconds, CALLERS),
      ),
      system(ctx, 'enqueue.single.pgBoss', 'single: pg-boss send', () =>
        pgBossSingleEnqueue(url, singleSeconds, CALLERS),
      ),
      system(ctx, 'enqueue.single.rawInsert', 'single: raw SQL INSERT (pg)', () =>
        rawInserts(url, singleSeconds, { notify: false, connections: CALLERS }),
      ),
      system(ctx, 'enqueue.single.rawInsertNotify', 'single: raw SQL INSERT + pg_notify (pg)', () =>
        rawInserts(url, singleSeconds, { notify: true, connections: CALLERS }),
      ),
    ];
    const r = ctx.results;
    r.ratio({
      key: 'bulkEnqueueVsGraphile',
      label: 'bulk enqueue: leasehold ÷ graphile-worker',
      numerator: 'enqueue.bulk.leasehold',
      denominator: 'enqueue.bulk.graphile',
      target: { op: '>=', value: 1 },
    });
    r.ratio({
      key: 'bulkEnqueueVsPgBoss',
      label: 'bulk enqueue: leasehold ÷ pg-boss',
      numerator: 'enqueue.bulk.leasehold',
      denominator: 'enqueue.bulk.pgBoss',
    });
    r.ratio({
      key: 'singleEnqueueVsGraphile',
      label: 'single enqueue: leasehold ÷ graphile-worker',
      numerator: 'enqueue.single.leasehold',
      denominator: 'enqueue.single.graphile',
      target: { op: '>=', value: 3 },
    });
    r.ratio({
      key: 'singleEnqueueVsPgBoss',
      label: 'single enqueue: leasehold ÷ pg-boss',
      numerator: 'enqueue.single.leasehold',
      denominator: 'enqueue.single.pgBoss',
    });
    r.ratio({
      key: 'singleEnqueueVsRawInsert',
      label: 'single enqueue: leasehold ÷ raw INSERT',
      numerator: 'enqueue.single.leasehold',
      denominator: 'enqueue.single.rawInsert',
      target: { op: '>=', value: 0.5 },
    });
    r.ratio({
      key: 'singleEnqueueVsRawInsertNotify',
      label: 'single enqueue: leasehold ÷ raw INSERT + pg_notify',
      numerator: 'enqueue.single.leasehold',
      denominator: 'enqueue.single.rawInsertNotify',
    });
    await roundRobin(ctx, 'enqueue', systems);
  },
};
