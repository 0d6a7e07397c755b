/**
 * A fencing token is never handed out before it is durable: after a real crash of the server
 * (no shutdown checkpoint, WAL not yet flushed is lost) and crash recovery, the next token of
 * every token path is strictly greater than every token handed out before the crash.
 *
 * One server per file (fsync and synchronous_commit on), each path in its own schema. A
 * CHECKPOINT comes before the last token taken: a sequence logs its increments 32 values ahead
 * and logs anew only after a checkpoint, so that is when an unflushed increment is lost. Each path
 * is crashed both ways: SIGQUIT (`pg_ctl stop -m immediate`) and SIGKILL of every process.
 *
 * Elections hold lease locks (src/locks/election.ts), so the lease-lock case covers them; advisory
 * locks carry no token.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { isLeaseholdError } from '../../src/core/errors.js';
import type { SessionLock } from '../../src/engine/locks.js';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import {
  startCrashablePostgres,
  type CrashablePostgres,
  type CrashHow,
} from '../support/crashable-postgres.js';
import { waitFor } from '../support/wait.js';

let server: CrashablePostgres;

before(async () => {
  server = await startCrashablePostgres();
});
after(async () => {
  await server?.stop();
});

let schemas = 0;
/** A fresh schema name for one case; the server is this file's own, so nothing needs dropping. */
const newSchema = (label: string): string => `crash_${label}_${++schemas}`;

async function openEngine(schema: string): Promise<PostgresEngine> {
  const engine = new PostgresEngine({
    connectionString: server.connectionString,
    schema,
    poolSize: 4,
  });
  await engine.migrate();
  return engine;
}

async function checkpoint(): Promise<void> {
  const client = new pg.Client({ connectionString: server.connectionString });
  await client.connect();
  try {
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
}

/**
 * Runs `beforeCrash` on an engine, crashes the server `how`, restarts it, then runs `afterCrash`
 * on a new engine (the old one's connections died with the server).
 */
async function acrossCrash<T>(
  label: string,
  how: CrashHow,
  beforeCrash: (engine: PostgresEngine) => Promise<T>,
  afterCrash: (engine: PostgresEngine, before: T) => Promise<void>,
): Promise<void> {
  const schema = newSchema(label);
  const first = await openEngine(schema);
  const handedOut = await beforeCrash(first);
  await server.crash({ how });
  await first.close().catch(() => {});
  await server.restart();
  const second = await openEngine(schema);
  try {
    await afterCrash(second, handedOut);
  } finally {
    await second.close();
  }
}

async function setDatabaseCommitMode(mode: 'on' | 'off'): Promise<void> {
  const client = new pg.Client({ connectionString: server.connectionString });
  await client.connect();
  try {
    await client.query(`ALTER DATABASE postgres SET synchronous_commit = ${mode}`);
  } finally {
    await client.end();
  }
}

const RUNS: { how: CrashHow; asyncDefault: boolean }[] = [
  { how: 'immediate', asyncDefault: false },
  { how: 'sigkill', asyncDefault: false },
  // An operator (or a role's setting) turned synchronous_commit off for the whole database: a
  // token statement still commits durably, so a crash right after its answer loses nothing.
  { how: 'immediate', asyncDefault: true },
];

for (const { how, asyncDefault } of RUNS) {
  describe(`tokens across a crash (${how}${asyncDefault ? ', synchronous_commit off by default' : ''})`, () => {
    if (asyncDefault) {
      before(() => setDatabaseCommitMode('off'));
      after(() => setDatabaseCommitMode('on'));
    }

    it('session locks: the next holder after restart gets a greater token', () => {
      const held: SessionLock[] = [];
      return acrossCrash(
        'session',
        how,
        async (engine) => {
          const first = await engine.sessionLockTryAcquire({ name: 'report' });
          assert.ok(first);
          await first.release();
          await checkpoint();
          // The reproduction: the holder still holds its term when the server crashes.
          const second = await engine.sessionLockTryAcquire({ name: 'report' });
          assert.ok(second);
          held.push(second);
          return [first.token, second.token];
        },
        async (engine, tokens) => {
          const next = await engine.sessionLockTryAcquire({ name: 'report' });
          assert.ok(next, 'the lock is free: its holder died with the server');
          assert.ok(
            next.token > Math.max(...tokens),
            `token after restart ${next.token} > tokens before the crash ${tokens.join(', ')}`,
          );
          // The holder from before the crash has been told its term ended.
          assert.equal(held[0]?.signal.aborted, true);
          await next.release();
        },
      );
    });

    it('leases: the next term after restart has a greater token', () =>
      acrossCrash(
        'lease',
        how,
        async (engine) => {
          const first = await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: 60_000 });
          assert.ok(first.acquired);
          await engine.leaseRelease({ resource: 'r', holder: 'a', token: first.lease.token });
          await checkpoint();
          // A 1 ms term: long over when the server is back, so another holder can take it.
          const second = await engine.leaseAcquire({ resource: 'r', holder: 'b', ttlMs: 1 });
          assert.ok(second.acquired);
          return [first.lease.token, second.lease.token];
        },
        async (engine, tokens) => {
          const next = await engine.leaseAcquire({ resource: 'r', holder: 'c', ttlMs: 60_000 });
          assert.ok(next.acquired, 'the 1 ms term before the crash has expired');
          assert.ok(next.lease.token > Math.max(...tokens), `${next.lease.token} > ${tokens}`);
        },
      ));

    it('lease locks (and so elections): the next term after restart has a greater token', () =>
      acrossCrash(
        'lease_lock',
        how,
        async (engine) => {
          const first = await engine.leaseLockAcquire({ name: 'l', holder: 'a', ttlMs: 60_000 });
          assert.ok(first.acquired);
          await engine.leaseLockRelease({ name: 'l', holder: 'a', token: first.lease.token });
          await checkpoint();
          const second = await engine.leaseLockAcquire({ name: 'l', holder: 'b', ttlMs: 1 });
          assert.ok(second.acquired);
          return [first.lease.token, second.lease.token];
        },
        async (engine, tokens) => {
          const next = await engine.leaseLockAcquire({ name: 'l', holder: 'c', ttlMs: 60_000 });
          assert.ok(next.acquired, 'the 1 ms term before the crash has expired');
          assert.ok(next.lease.token > Math.max(...tokens), `${next.lease.token} > ${tokens}`);
        },
      ));

    it('semaphores: the next permit after restart has a greater token', () =>
      acrossCrash(
        'semaphore',
        how,
        async (engine) => {
          const take = (holder: string, ttlMs: number) =>
            engine.semaphoreAcquire({ name: 's', holder, permits: 1, ttlMs });
          const first = await take('a', 60_000);
          assert.ok(first.acquired);
          await engine.semaphoreRelease({ ...first.permit });
          await checkpoint();
          const second = await take('b', 1);
          assert.ok(second.acquired);
          return [first.permit.token, second.permit.token];
        },
        async (engine, tokens) => {
          const next = await engine.semaphoreAcquire({
            name: 's',
            holder: 'c',
            permits: 1,
            ttlMs: 60_000,
          });
          assert.ok(next.acquired, 'the 1 ms permit before the crash has expired');
          assert.ok(next.permit.token > Math.max(...tokens), `${next.permit.token} > ${tokens}`);
        },
      ));

    it('job claims: the next claim after restart has a greater generation', () =>
      acrossCrash(
        'job',
        how,
        async (engine) => {
          await engine.jobEnqueue({ jobs: [{ queue: 'q', payload: {}, maxAttempts: 100 }] });
          const claim = { queues: ['q'], workerId: 'w1', limit: 1 };
          const [first] = await engine.jobClaimBatch({ ...claim, leaseTtlMs: 60_000 });
          assert.ok(first);
          await engine.jobHandBack({
            workerId: 'w1',
            jobs: [{ id: first.id, generation: first.generation }],
          });
          await checkpoint();
          const [second] = await engine.jobClaimBatch({ ...claim, leaseTtlMs: 1 });
          assert.ok(second);
          return [first.generation, second.generation];
        },
        async (engine, generations) => {
          // The claim before the crash held a 1 ms lease: rescue the job, then claim it again.
          const job = await waitFor('the job claimed again', async () => {
            await engine.jobRescueExpired({ limit: 10, backoff: { baseMs: 1, capMs: 1 } });
            const [claimed] = await engine.jobClaimBatch({
              queues: ['q'],
              workerId: 'w2',
              limit: 1,
              leaseTtlMs: 60_000,
            });
            return claimed;
          });
          assert.ok(
            job.generation > Math.max(...generations),
            `${job.generation} > ${generations}`,
          );
        },
      ));

    it('schedule slots: a slot claimed before the crash is not claimed again', () => {
      const slot = new Date(Date.UTC(2026, 0, 1));
      return acrossCrash(
        'slot',
        how,
        async (engine) => {
          await checkpoint();
          const claimed = await engine.scheduleSlotClaim({
            name: 'nightly',
            slot,
            holder: 'a',
            token: 3,
          });
          assert.ok(claimed, 'the slot was free');
        },
        async (engine) => {
          const again = await engine.scheduleSlotClaim({
            name: 'nightly',
            slot,
            holder: 'b',
            token: 4,
          });
          assert.equal(again, null, 'the slot was claimed before the crash: nobody runs it twice');
        },
      );
    });

    it('fences: a token older than one accepted before the crash is still refused', () =>
      acrossCrash(
        'fence',
        how,
        async (engine) => {
          await engine.fenceCheck({ scope: 'ledger', token: 7 });
          await checkpoint();
          await engine.fenceCheck({ scope: 'ledger', token: 9 });
        },
        async (engine) => {
          assert.equal(await engine.fenceGet({ scope: 'ledger' }), 9);
          await assert.rejects(engine.fenceCheck({ scope: 'ledger', token: 8 }), (error) =>
            isLeaseholdError(error),
          );
        },
      ));
  });
}
