/**
 * A worker's status change (draining, stopped) is durable: after a real crash of the server and
 * crash recovery, the worker is not back to `alive`. Plain heartbeats may still commit without
 * waiting for their flush (postgres-workers.ts); a status change must not.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { WorkerStatus } from '../../src/core/types.js';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { WorkerPresence } from '../../src/queue/worker-presence.js';
import { startCrashablePostgres, type CrashablePostgres } from '../support/crashable-postgres.js';

let server: CrashablePostgres;

before(async () => {
  server = await startCrashablePostgres();
});
after(async () => {
  await server?.stop();
});

const ROW = { name: 'w', host: 'h', pid: 1, queues: ['q'], concurrency: 1 };

describe('worker status across a crash', () => {
  for (const status of ['draining', 'stopped'] as const satisfies readonly WorkerStatus[]) {
    it(`a worker set ${status} is still ${status} after an immediate crash and restart`, async () => {
      const schema = `crash_worker_${status}`;
      const first = new PostgresEngine({ connectionString: server.connectionString, schema });
      await first.migrate();
      // The presence service as a worker runs it, though never started: its status is set the
      // way Worker.stop() sets it.
      const presence = new WorkerPresence(first, { id: `w-${status}`, ...ROW }, () => 0, {
        intervalMs: 60_000,
      });
      await presence.register();
      await presence.runOnce(); // a plain heartbeat, committed without waiting for its flush
      await presence.setStatus(status);
      await server.crash({ how: 'immediate' });
      await first.close().catch(() => {});
      await server.restart();
      const second = new PostgresEngine({ connectionString: server.connectionString, schema });
      try {
        const [worker] = await second.workerList({ limit: 10 });
        assert.equal(worker?.status, status);
      } finally {
        await second.close();
      }
    });
  }
});
