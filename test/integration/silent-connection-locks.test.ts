/**
 * Advisory and session locks live on a dedicated connection. When the database goes silent
 * (a partition, a frozen host: packets dropped, sockets left open) that connection neither
 * answers nor errors, so a holder that only listens for errors believes it holds the lock for as
 * long as the OS keepalive takes to give up (hours), while the server, or a promoted standby, may
 * hand the lock to someone else much sooner.
 *
 * The holder probes its connection and must hear of the loss within the documented bound,
 * `lockProbeIntervalMs + lockProbeTimeoutMs` after the silence began, and before the server could
 * free the lock: the lock's session tells the server to give up on a silent client no sooner than
 * twice that bound. Here the proxy keeps the server's side of the socket alive, so the server never
 * notices by itself: the test plays its part by terminating the holder's backend at that earliest
 * moment, with a contender already queued for the lock.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { isLeaseholdError } from '../../src/core/errors.js';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { Leasehold } from '../../src/leasehold.js';
import { FaultProxy } from '../chaos/harness/fault-proxy.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { watchLoopLag, type LoopLag } from '../support/loop-lag.js';
import { upstreamOf, viaPort } from '../support/proxied-url.js';
import { within } from '../support/wait.js';

after(closeTestDatabase);

const PROBE_INTERVAL_MS = 500;
const PROBE_TIMEOUT_MS = 1_000;
const PROBES = { lockProbeIntervalMs: PROBE_INTERVAL_MS, lockProbeTimeoutMs: PROBE_TIMEOUT_MS };
/** The documented bound: the signal fires this long after the silence began, at the latest. */
const LOSS_BOUND_MS = PROBE_INTERVAL_MS + PROBE_TIMEOUT_MS;
/** The earliest the server may give up on the silent holder (documented: twice the bound). */
const SERVER_NOTICE_MS = 2 * LOSS_BOUND_MS;

for (const kind of ['advisory', 'session'] as const) {
  describe(`${kind} lock on a silent database`, () => {
    it('fires the holder signal within the probe bound, before another holder is granted', (t) =>
      withSchema(`silent ${kind} lock`, async (schema) => {
        const { host, port } = upstreamOf(schema.url);
        const proxy = new FaultProxy(host, port);
        const holderPort = await proxy.portFor('holder');
        const holderEngine = new PostgresEngine({
          connectionString: viaPort(schema.url, holderPort),
          schema: schema.schema,
          poolSize: 2,
          ...PROBES,
        });
        const holderSide = Leasehold.fromEngine(holderEngine);
        const otherSide = Leasehold.fromEngine(await schema.engine());
        let lag: LoopLag | undefined;
        try {
          const holder =
            kind === 'advisory'
              ? holderSide.locks.advisory('nightly')
              : holderSide.locks.session('nightly');
          await holder.lock({ timeout: '10s' });
          const pid = holder.backendPid;
          assert.ok(pid, 'the term is held by a backend of its own');
          // Probes answered while the network is fine: the lock stays held.
          await new Promise((r) => setTimeout(r, 3 * PROBE_INTERVAL_MS));
          assert.equal(holder.isHeld(), true, 'answered probes keep the lock');

          const contender =
            kind === 'advisory'
              ? otherSide.locks.advisory('nightly')
              : otherSide.locks.session('nightly');
          const events: string[] = [];
          let firedAfterMs = Number.NaN;
          lag = watchLoopLag();
          const silentAt = performance.now();
          holder.signal.addEventListener('abort', () => {
            firedAfterMs = performance.now() - silentAt;
            events.push('holder signal');
          });
          proxy.setMode('holder', { kind: 'silent' });
          const granted = contender.lock({ timeout: '60s' }).then(() => {
            events.push('contender granted');
          });

          // The server gives up on the silent client: the lock is free for the contender. (The
          // event is recorded once the server has done it: a stalled event loop that runs this
          // timer beside the holder's deadline must not reorder what the server did.)
          const serverNotices = new Promise<void>((resolve) =>
            setTimeout(() => {
              void (otherSide.engine as PostgresEngine).pool
                .query('SELECT pg_terminate_backend($1)', [pid])
                .then(() => {
                  events.push('server frees the lock');
                  resolve();
                });
            }, SERVER_NOTICE_MS),
          );
          await within(serverNotices, SERVER_NOTICE_MS + 30_000, 'the emulated server notice');
          await within(granted, 30_000, 'the contender being granted');

          assert.deepEqual([...events].sort(), [
            'contender granted',
            'holder signal',
            'server frees the lock',
          ]);
          assert.equal(
            events[0],
            'holder signal',
            `the holder hears of the loss before anyone else can hold the lock: ${events.join(' < ')}`,
          );
          t.diagnostic(
            `signal ${Math.round(firedAfterMs)} ms after the silence (bound ${LOSS_BOUND_MS} ms)`,
          );
          assert.ok(isLeaseholdError(holder.signal.reason, 'lease_lost'), 'lease_lost');
          assert.equal(holder.isHeld(), false);
          assert.ok(
            firedAfterMs <= LOSS_BOUND_MS + 1_000 + lag.maxMs,
            `signal ${Math.round(firedAfterMs)} ms after the silence began (bound ${LOSS_BOUND_MS} ms, loop lag ${Math.round(lag.maxMs)} ms)`,
          );

          proxy.setMode('holder', { kind: 'pass' });
          assert.equal(await holder.unlock(), false, 'nothing left to unlock');
          await contender.unlock();
          // Healed: the same handle takes the lock again through the proxy.
          await holder.lock({ timeout: '10s' });
          assert.equal(holder.isHeld(), true);
          await holder.unlock();
        } finally {
          lag?.stop();
          proxy.setMode('holder', { kind: 'pass' });
          await within(holderSide.close(), 10_000, 'closing the holder side');
          await proxy.close();
        }
      }));
  });
}
