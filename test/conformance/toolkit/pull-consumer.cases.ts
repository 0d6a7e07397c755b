import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { isLeaseholdError } from '../../../src/core/errors.js';
import type { Message } from '../../../src/queue/message.js';
import { pumpFor, pumpUntil } from '../../support/manual-time.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

/**
 * The pull consumer of seed 004 on every engine (decision 0246): receive / tryReceive /
 * receiveMany, and ack / nack / extend fenced by the message's token. Time is the harness's
 * ManualClock: visibility timeouts pass when the clock is moved, never by sleeping.
 */
export function pullConsumerCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: pull consumer`, () => {
    conformanceCase(
      h,
      'tryReceive answers at once; a message carries the job, and ack completes it',
      async ({ lh, engine }) => {
        const q = lh.queue('pull');
        assert.equal(await q.tryReceive({ visibility: '5s' }), undefined);
        const queued = await q.enqueue({ n: 1 }, { type: 'send-email', headers: { h: 'v' } });
        const m = await q.tryReceive<{ n: number }>({ visibility: '5s' });
        assert.ok(m);
        assert.deepEqual(
          [m.id, m.payload, m.type, m.headers, m.attempt, m.token],
          [queued.id, { n: 1 }, 'send-email', { h: 'v' }, 1, m.job.generation],
        );
        assert.equal(m.signal.aborted, false);
        await m.ack({ sent: true });
        const done = await engine.jobGet({ id: queued.id });
        assert.equal(done?.status, 'completed');
        assert.deepEqual(done?.result, { sent: true });
        assert.equal(m.signal.aborted, false, 'an acked message has nothing to signal');
        await assert.rejects(m.ack(), (e) => isLeaseholdError(e, 'task_done'));
      },
    );

    conformanceCase(
      h,
      'receive waits for an enqueue, or for `wait`, or for its signal',
      async ({ lh, clock }) => {
        const q = lh.queue('pull');
        let got: Message | undefined | 'pending' = 'pending';
        const waiting = q.receive({ visibility: '5s', wait: '30s' }).then((m) => (got = m));
        await pumpFor(clock, 50);
        assert.equal(got, 'pending', 'nothing to receive yet');
        const queued = await q.enqueue({ late: true });
        const m = await pumpUntil(clock, 'the waiting receive', () =>
          got === 'pending' ? null : got,
        );
        assert.equal(m.id, queued.id);
        await waiting;
        await m.ack();

        let none: Message | undefined | 'pending' = 'pending';
        const timedOut = q.receive({ visibility: '5s', wait: '2s' }).then((x) => (none = x));
        await pumpUntil(clock, 'wait to pass', () => none !== 'pending');
        assert.equal(await timedOut, undefined);

        const controller = new AbortController();
        const cancelled = q.receive({ visibility: '5s', signal: controller.signal });
        await pumpFor(clock, 20);
        controller.abort();
        await assert.rejects(cancelled, (e) => isLeaseholdError(e, 'aborted'));
      },
    );

    conformanceCase(h, 'receiveMany claims up to max in one call', async ({ lh }) => {
      const q = lh.queue('pull');
      await q.enqueueMany(Array.from({ length: 5 }, (_, i) => ({ payload: { i } })));
      const first = await q.receiveMany({ max: 3, visibility: '5s' });
      assert.deepEqual(
        first.map((m) => (m.payload as { i: number }).i),
        [0, 1, 2],
      );
      const rest = await q.receiveMany({ max: 3, visibility: '5s', wait: 0 });
      assert.equal(rest.length, 2);
      assert.deepEqual(await q.receiveMany({ max: 3, visibility: '5s', wait: 0 }), []);
    });

    conformanceCase(
      h,
      'removeOnAck deletes an acked job; a nacked one stays; a bad flag changes nothing',
      async ({ lh, engine }) => {
        const q = lh.queue('pull');
        const [kept, gone, nacked] = await q.enqueueMany(
          Array.from({ length: 3 }, (_, i) => ({ payload: { i } })),
        );
        await assert.rejects(
          q.receiveMany({ max: 3, visibility: '5s', removeOnAck: 'yes' as unknown as boolean }),
          (e) => isLeaseholdError(e, 'invalid_argument') && e.details.field === 'removeOnAck',
        );
        assert.equal((await engine.jobGet({ id: kept!.id }))?.status, 'pending');
        const one = await q.tryReceive({ visibility: '5s' });
        await one!.ack('kept');
        const two = await q.receiveMany({ max: 2, visibility: '5s', removeOnAck: true });
        assert.deepEqual(
          two.map((m) => m.id),
          [gone!.id, nacked!.id],
        );
        await two[0]!.ack('not kept');
        await two[1]!.nack({ delay: '1h' });
        assert.equal((await engine.jobGet({ id: kept!.id }))?.status, 'completed');
        assert.equal(await engine.jobGet({ id: gone!.id }), null, 'deleted at its ack');
        assert.equal((await engine.jobGet({ id: nacked!.id }))?.status, 'pending');
      },
    );

    conformanceCase(
      h,
      'acks in flight together are answered each by its own token',
      async ({ lh, clock, engine }) => {
        const a = lh.queue('pull');
        const b = lh.queue('pull');
        await a.enqueueMany(Array.from({ length: 12 }, (_, i) => ({ payload: { i } })));
        const stale = await a.receiveMany({ max: 4, visibility: '1s' });
        await pumpFor(clock, 1_100);
        await engine.jobRescueExpired({ limit: 10, backoff: { baseMs: 0, capMs: 0 } });
        const fresh = await b.receiveMany({ max: 12, visibility: '30s' });
        assert.equal(fresh.length, 12);
        const late = await Promise.allSettled(stale.map((m) => m.ack()));
        assert.ok(
          late.every((r) => r.status === 'rejected' && isLeaseholdError(r.reason, 'lease_lost')),
        );
        await Promise.all(fresh.map((m) => m.ack(m.payload)));
        const jobs = await engine.jobList({ queue: 'pull', limit: 20, offset: 0 });
        assert.ok(jobs.every((j) => j.status === 'completed'));
        assert.deepEqual(
          jobs.map((j) => j.result).sort((x, y) => (x as { i: number }).i - (y as { i: number }).i),
          Array.from({ length: 12 }, (_, i) => ({ i })),
        );
      },
    );

    conformanceCase(
      h,
      'past its visibility a message goes to another receiver, and the first ack is refused',
      async ({ lh, clock, engine }) => {
        const a = lh.queue('pull');
        const b = lh.queue('pull'); // another receiver
        const queued = await a.enqueue({}, { maxAttempts: 5 });
        const first = (await a.tryReceive({ visibility: '1s' }))!;
        assert.equal(await b.tryReceive({ visibility: '1s' }), undefined, 'invisible meanwhile');
        await pumpUntil(clock, 'the trust deadline', () => first.signal.aborted);
        assert.ok(isLeaseholdError(first.signal.reason, 'lease_lost'));
        await pumpFor(clock, 1_000);
        // The lease ran out: the maintainer's rescue would hand it back; run it directly.
        await engine.jobRescueExpired({ limit: 10, backoff: { baseMs: 0, capMs: 0 } });
        const second = await pumpUntil(clock, 'the second delivery', () =>
          b.tryReceive({ visibility: '5s' }),
        );
        assert.equal(second.id, queued.id);
        assert.equal(second.attempt, 2);
        assert.ok(second.token > first.token);
        await assert.rejects(first.ack(), (e) => isLeaseholdError(e, 'lease_lost'));
        await second.ack('second');
        assert.equal((await engine.jobGet({ id: queued.id }))?.result, 'second');
      },
    );

    conformanceCase(
      h,
      'extend keeps a message invisible past its first visibility',
      async ({ lh, clock }) => {
        const q = lh.queue('pull');
        await q.enqueue({});
        const m = (await q.tryReceive({ visibility: '1s' }))!;
        await pumpFor(clock, 500);
        await m.extend('3s');
        await pumpFor(clock, 1_500);
        assert.equal(m.signal.aborted, false, 'trusted again from the extend');
        assert.equal(await lh.queue('pull').tryReceive({ visibility: '1s' }), undefined);
        await m.ack();
      },
    );

    conformanceCase(
      h,
      'nack retries after its delay, and dead-letters the last attempt',
      async ({ lh, clock, engine }) => {
        const q = lh.queue('pull');
        const queued = await q.enqueue({}, { maxAttempts: 2 });
        const m1 = (await q.tryReceive({ visibility: '5s' }))!;
        assert.equal(await m1.nack({ delay: '1s', reason: 'not yet' }), 'retried');
        assert.equal(await q.tryReceive({ visibility: '5s' }), undefined, 'not before its delay');
        const m2 = await pumpUntil(clock, 'the retry', () => q.tryReceive({ visibility: '5s' }));
        assert.equal(m2.attempt, 2);
        assert.equal(await m2.nack(), 'dead');
        const dead = await engine.jobGet({ id: queued.id });
        assert.equal(dead?.status, 'dead');
        assert.match(dead?.errors[0]?.error ?? '', /not yet/);
      },
    );

    conformanceCase(
      h,
      'refuses bad options with invalid_argument naming the field, and claims nothing',
      async ({ lh, engine }) => {
        const q = lh.queue('pull');
        const queued = await q.enqueue({});
        const bad: [() => Promise<unknown>, string][] = [
          [() => q.tryReceive({ visibility: 50 }), 'visibility'],
          [() => q.tryReceive({} as never), 'visibility'],
          [() => q.receive({ visibility: '5s', wait: -1 }), 'wait'],
          [() => q.receiveMany({ visibility: '5s', max: 0 }), 'max'],
          [() => q.receiveMany({ visibility: '5s', max: 1_001 }), 'max'],
          [() => q.receive({ visibility: '5s', signal: {} as never }), 'signal'],
        ];
        for (const [call, field] of bad)
          await assert.rejects(
            call(),
            (e) => isLeaseholdError(e, 'invalid_argument') && e.details.field === field,
            field,
          );
        assert.equal((await engine.jobGet({ id: queued.id }))?.status, 'pending');
        const m = (await q.tryReceive({ visibility: '5s' }))!;
        await assert.rejects(m.extend(10), (e) => isLeaseholdError(e, 'invalid_argument'));
        await assert.rejects(m.nack({ delay: -5 }), (e) => isLeaseholdError(e, 'invalid_argument'));
        await m.ack();
      },
    );
  });
}
