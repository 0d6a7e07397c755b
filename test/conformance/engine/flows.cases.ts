import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { Job } from '../../../src/core/types.js';
import type { CallerTransaction } from '../../../src/engine/engine.js';
import { JOBS_TOPIC } from '../../../src/engine/jobs.js';
import type { JobSpec } from '../../../src/engine/jobs.js';
import { PostgresEngine } from '../../../src/engine/postgres/postgres-engine.js';
import { EventQueue } from '../../support/events.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

const TTL = 30_000;

/**
 * The flow family at the engine seam (decision 0255): the tree written at once, and a parent
 * settled in the transaction that finishes each child, whatever statement finished it.
 */
export function flowEngineCases(h: EngineHarness): void {
  describe(`[${h.name}] engine: flows`, () => {
    conformanceCase(
      h,
      'children completed by concurrent statements release their parent once, announced on its queue; a keyed root met again writes nothing',
      async ({ engine }) => {
        const flow = await engine.jobEnqueueFlow({
          root: {
            spec: spec('fan-root', { key: 'once' }),
            children: Array.from({ length: 8 }, (_, n) => ({
              spec: spec('fan-leaf', { payload: n }),
            })),
          },
        });
        assert.equal(flow.created, true);
        assert.deepEqual(
          flow.children.map((c) => c.job.id),
          flow.children.map((_, n) => flow.job.id + 1 + n),
          'ids in pre-order',
        );
        const again = await engine.jobEnqueueFlow({
          root: { spec: spec('fan-root', { key: 'once' }), children: [{ spec: spec('fan-leaf') }] },
        });
        assert.deepEqual([again.created, again.job.id, again.children], [false, flow.job.id, []]);
        assert.equal((await engine.jobList({ queue: 'fan-leaf', limit: 20, offset: 0 })).length, 8);

        const announced = new EventQueue<string>();
        const subscription = await engine.notifyListen({
          topic: JOBS_TOPIC,
          onNotify: announced.push,
        });
        try {
          const claimed = await engine.jobClaimBatch({
            queues: ['fan-leaf'],
            workerId: 'w',
            limit: 8,
            leaseTtlMs: TTL,
          });
          assert.equal(claimed.length, 8);
          await Promise.all(
            claimed.map((job) =>
              engine.jobComplete({
                workerId: 'w',
                jobs: [{ id: job.id, generation: job.generation, result: job.payload }],
              }),
            ),
          );
          const root = await engine.jobGet({ id: flow.job.id });
          assert.equal(root?.status, 'pending');
          while ((await announced.next(10_000, 'the root announced')) !== 'fan-root');
          const [parent] = await engine.jobClaimBatch({
            queues: ['fan-root'],
            workerId: 'w',
            limit: 5,
            leaseTtlMs: TTL,
          });
          assert.equal(parent?.id, flow.job.id);
          const { children, total } = await engine.jobChildren({ id: flow.job.id, limit: 3 });
          assert.equal(total, 8);
          assert.deepEqual(
            children.map((c) => [c.status, c.result]),
            [
              ['completed', 0],
              ['completed', 1],
              ['completed', 2],
            ],
          );
          assert.deepEqual(await engine.jobChildren({ id: parent!.id + 100 }), {
            children: [],
            total: 0,
          });
        } finally {
          await subscription.unsubscribe();
        }
      },
      { requires: ['notifications'] },
    );

    conformanceCase(
      h,
      'a child completed with removal counts as done; one rescued to the dead letter fails its parent, and the failure climbs by the policies',
      async ({ engine, clock }) => {
        const flow = await engine.jobEnqueueFlow({
          root: {
            spec: spec('r-root'),
            children: [
              { spec: spec('r-removed') },
              {
                spec: spec('r-mid'),
                children: [{ spec: spec('r-expiring', { maxAttempts: 1 }) }],
              },
            ],
          },
        });
        const [removed] = await engine.jobClaimBatch({
          queues: ['r-removed'],
          workerId: 'w',
          limit: 1,
          leaseTtlMs: TTL,
        });
        await engine.jobComplete({
          workerId: 'w',
          jobs: [{ id: removed!.id, generation: removed!.generation }],
          remove: true,
        });
        assert.equal(await engine.jobGet({ id: removed!.id }), null);
        assert.deepEqual(await engine.jobExplain({ id: flow.job.id }), {
          reason: 'children',
          unfinished: 1,
        });
        const [expiring] = await engine.jobClaimBatch({
          queues: ['r-expiring'],
          workerId: 'w',
          limit: 1,
          leaseTtlMs: 1_000,
        });
        await clock.advance(2_000);
        const rescue = await engine.jobRescueExpired({
          limit: 10,
          backoff: { baseMs: 10, capMs: 10 },
        });
        assert.deepEqual(rescue, { rescued: 0, deadLettered: 1 });
        const mid = await engine.jobGet({ id: flow.children[1]!.job.id });
        assert.equal(mid?.status, 'dead');
        assert.match(
          mid?.lastError ?? '',
          new RegExp(`^child #${expiring!.id} failed: lease expired`),
        );
        const root = await engine.jobGet({ id: flow.job.id });
        assert.equal(root?.status, 'dead');
        assert.match(
          root?.lastError ?? '',
          new RegExp(`^child #${mid!.id} failed: child #${expiring!.id}`),
        );
      },
    );

    conformanceCase(
      h,
      "a child completed in the caller's transaction releases its parent only when it commits",
      async ({ engine }) => {
        assert.ok(engine instanceof PostgresEngine);
        const flow = await engine.jobEnqueueFlow({
          root: { spec: spec('tx-root'), children: [{ spec: spec('tx-leaf') }] },
        });
        const [leaf] = await engine.jobClaimBatch({
          queues: ['tx-leaf'],
          workerId: 'w',
          limit: 1,
          leaseTtlMs: TTL,
        });
        const complete = async (outcome: 'COMMIT' | 'ROLLBACK'): Promise<Job | null> => {
          const client = await engine.pool.connect();
          try {
            await client.query('BEGIN');
            const tx: CallerTransaction = client;
            await engine.jobComplete({
              workerId: 'w',
              jobs: [{ id: leaf!.id, generation: leaf!.generation, result: 'r' }],
              tx,
            });
            const seen = await engine.jobGet({ id: flow.job.id });
            assert.equal(seen?.status, 'waiting', 'not released outside the transaction yet');
            await client.query(outcome);
          } finally {
            client.release();
          }
          return engine.jobGet({ id: flow.job.id });
        };
        assert.equal((await complete('ROLLBACK'))?.status, 'waiting');
        assert.equal((await complete('COMMIT'))?.status, 'pending');
      },
      { requires: ['callerTransactions'], engine: 'postgres' },
    );
  });
}

function spec(queue: string, overrides: Partial<JobSpec> = {}): JobSpec {
  return { queue, payload: null, maxAttempts: 3, ...overrides };
}
