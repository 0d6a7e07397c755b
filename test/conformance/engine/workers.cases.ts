import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { Engine } from '../../../src/engine/engine.js';
import type { WorkerRegisterParams } from '../../../src/engine/workers.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

/** The worker family: the registry the sweeper and the dashboard read. */
export function workerEngineCases(h: EngineHarness): void {
  describe(`[${h.name}] engine: workers`, () => {
    conformanceCase(
      h,
      'registers a worker alive, with its identity and queues and nothing in flight',
      async ({ engine, clock }) => {
        const worker = await register(engine, 'w1', { queues: ['emails', 'reports'] });
        const now = clock.now().getTime();
        assert.equal(worker.id, 'w1');
        assert.equal(worker.name, 'worker w1');
        assert.equal(worker.host, 'host-1');
        assert.equal(worker.pid, 4242);
        assert.deepEqual(worker.queues, ['emails', 'reports']);
        assert.equal(worker.concurrency, 4);
        assert.equal(worker.status, 'alive');
        assert.equal(worker.startedAt.getTime(), now);
        assert.equal(worker.lastSeenAt.getTime(), now);
        assert.equal(worker.inFlight, 0);
        assert.equal(worker.kind, 'library', 'the default kind');
        assert.deepEqual(await engine.workerList({ limit: 10 }), [worker]);
      },
    );

    conformanceCase(
      h,
      "keeps each worker's kind (library or http) through heartbeats, and a new registration sets it",
      async ({ engine }) => {
        await register(engine, 'lib');
        const http = await register(engine, 'http-1', { kind: 'http' });
        assert.equal(http.kind, 'http');
        assert.equal((await engine.workerHeartbeat({ id: 'http-1', inFlight: 1 }))?.kind, 'http');
        const listed = await engine.workerList({ limit: 10 });
        assert.deepEqual(
          listed.map((w) => [w.id, w.kind]),
          [
            ['lib', 'library'],
            ['http-1', 'http'],
          ],
        );
        assert.equal((await register(engine, 'lib', { kind: 'http' })).kind, 'http');
      },
    );

    conformanceCase(
      h,
      'refreshes last seen and in-flight on a heartbeat, and sets the status only when given',
      async ({ engine, clock }) => {
        await register(engine, 'w1');
        await clock.advance(5_000);
        const beat = await engine.workerHeartbeat({ id: 'w1', inFlight: 3 });
        assert.equal(beat?.lastSeenAt.getTime(), clock.now().getTime());
        assert.equal(beat?.inFlight, 3);
        assert.equal(beat?.status, 'alive');
        assert.equal(beat?.startedAt.getTime(), clock.now().getTime() - 5_000);

        const draining = await engine.workerHeartbeat({
          id: 'w1',
          inFlight: 1,
          status: 'draining',
        });
        assert.equal(draining?.status, 'draining');
        assert.equal(draining?.inFlight, 1);
        const still = await engine.workerHeartbeat({ id: 'w1', inFlight: 0 });
        assert.equal(still?.status, 'draining', 'an omitted status is kept');
        assert.equal(await engine.workerHeartbeat({ id: 'unknown', inFlight: 0 }), null);
      },
    );

    conformanceCase(h, 'lists workers filtered by status, up to the limit', async ({ engine }) => {
      for (const id of ['w1', 'w2', 'w3', 'w4']) await register(engine, id);
      await engine.workerHeartbeat({ id: 'w2', inFlight: 0, status: 'draining' });
      await engine.workerHeartbeat({ id: 'w4', inFlight: 0, status: 'stopped' });
      const ids = async (p: Parameters<Engine['workerList']>[0]) =>
        (await engine.workerList(p)).map((w) => w.id).sort();
      assert.deepEqual(await ids({ limit: 10 }), ['w1', 'w2', 'w3', 'w4']);
      assert.deepEqual(await ids({ status: 'alive', limit: 10 }), ['w1', 'w3']);
      assert.deepEqual(await ids({ status: 'draining', limit: 10 }), ['w2']);
      assert.deepEqual(await ids({ status: 'dead', limit: 10 }), []);
      assert.equal((await engine.workerList({ limit: 2 })).length, 2);
    });

    conformanceCase(
      h,
      'marks dead only alive or draining workers silent for longer than the window, a limited number at a time',
      async ({ engine, clock }) => {
        for (const id of ['silent-1', 'silent-2', 'draining', 'stopped', 'chatty'])
          await register(engine, id);
        await engine.workerHeartbeat({ id: 'draining', inFlight: 1, status: 'draining' });
        await engine.workerHeartbeat({ id: 'stopped', inFlight: 0, status: 'stopped' });
        await clock.advance(20_000);
        await engine.workerHeartbeat({ id: 'chatty', inFlight: 2 });
        await clock.advance(10_000);

        assert.equal(
          await engine.workerMarkDead({ silentForMs: 30_000, limit: 10 }),
          0,
          'not longer',
        );
        await clock.advance(1);
        assert.equal(await engine.workerMarkDead({ silentForMs: 30_000, limit: 2 }), 2);
        assert.equal(await engine.workerMarkDead({ silentForMs: 30_000, limit: 2 }), 1);
        assert.equal(await engine.workerMarkDead({ silentForMs: 30_000, limit: 2 }), 0);
        const statuses = Object.fromEntries(
          (await engine.workerList({ limit: 10 })).map((w) => [w.id, w.status]),
        );
        assert.deepEqual(statuses, {
          'silent-1': 'dead',
          'silent-2': 'dead',
          draining: 'dead',
          stopped: 'stopped',
          chatty: 'alive',
        });
      },
    );

    conformanceCase(
      h,
      're-registering a known id brings the worker back alive with its new details',
      async ({ engine, clock }) => {
        await register(engine, 'w1');
        await clock.advance(60_000);
        assert.equal(await engine.workerMarkDead({ silentForMs: 30_000, limit: 10 }), 1);
        const again = await register(engine, 'w1', { pid: 5151, queues: ['other'] });
        assert.equal(again.status, 'alive');
        assert.equal(again.pid, 5151);
        assert.deepEqual(again.queues, ['other']);
        assert.equal(again.lastSeenAt.getTime(), clock.now().getTime());
        const listed = await engine.workerList({ limit: 10 });
        assert.equal(listed.length, 1);
        assert.equal(listed[0]?.status, 'alive');
      },
    );
  });
}

function register(
  engine: Engine,
  id: string,
  overrides: Partial<WorkerRegisterParams> = {},
): ReturnType<Engine['workerRegister']> {
  return engine.workerRegister({
    id,
    name: `worker ${id}`,
    host: 'host-1',
    pid: 4242,
    queues: ['q'],
    concurrency: 4,
    ...overrides,
  });
}
