// The pull consumer under process faults (issue 27): three processes pull 1,000 messages with
// receiveMany/ack; one is SIGKILLed, one SIGSTOPped past the visibility timeout. Every message
// must end acked exactly once, by the token the database last handed out for it, and the frozen
// process's late acks must be refused.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Leasehold } from '../../src/leasehold.js';
import { startScript, type CliProcess } from '../support/cli-process.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { EVENT_TIMEOUT_MS } from '../support/timing.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

const FIXTURE = new URL('./fixtures/pull-consumer.ts', import.meta.url).pathname;
const MESSAGES = 1_000;
const VISIBILITY_MS = 1_500;

interface AckEvent {
  event: string;
  id: number;
  token: number;
}

function acks(proc: CliProcess, kind: 'acked' | 'refused' | 'received'): AckEvent[] {
  return proc.lines
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as AckEvent)
    .filter((e) => e.event === kind);
}

/**
 * SIGSTOPs `proc` right after it starts on a message, and again until the database shows its
 * receiver holding at least two messages (processing, claimed by the receiver of the message it
 * just printed). It acks one at a time, so at most one of them can have its ack in flight: the
 * other is acked only after the visibility has passed. Stopped on the last message of a batch,
 * it could hold nothing unacked, and the test then failed with no late ack to refuse.
 */
async function freezeHoldingMessages(lh: Leasehold, proc: CliProcess): Promise<void> {
  for (let tries = 1; ; tries++) {
    const seen = acks(proc, 'received').length;
    await waitFor('a message started', () => acks(proc, 'received').length > seen, {
      timeoutMs: EVENT_TIMEOUT_MS,
    });
    proc.kill('SIGSTOP');
    const started = acks(proc, 'received').at(-1)!;
    const jobs = await lh.engine.jobList({ queue: 'pull', limit: 2 * MESSAGES, offset: 0 });
    const receiver = jobs.find((j) => j.id === started.id)?.claimedBy;
    const held = jobs.filter((j) => j.status === 'processing' && j.claimedBy === receiver);
    if (receiver && held.length >= 2) return;
    proc.kill('SIGCONT');
    assert.ok(tries < 10, `stopped ${tries} times, never holding two messages`);
  }
}

describe('pull consumers across processes', () => {
  it('acks every message exactly once by a valid token through a SIGKILL and a SIGSTOP past the visibility', () =>
    withSchema('pull consumers', async (ctx) => {
      const lh = Leasehold.fromEngine(await ctx.engine({ poolSize: 4 }));
      await lh
        .queue('pull')
        .enqueueMany(
          Array.from({ length: MESSAGES }, (_, i) => ({ payload: { sleepMs: 5 + (i % 4) * 5 } })),
        );
      const maintainer = lh.maintainer({ interval: 200 });
      maintainer.start();
      const env = {
        DATABASE_URL: ctx.url,
        SCHEMA: ctx.schema,
        QUEUE: 'pull',
        VISIBILITY_MS: String(VISIBILITY_MS),
      };
      // The frozen one takes batches of 50 (about 0.6 s of work, under the visibility): stopped
      // at any moment, it holds messages it has yet to ack.
      const [killed, frozen, steady] = ['10', '50', '10'].map((batch) =>
        startScript(FIXTURE, [], { ...env, BATCH: batch }),
      ) as [CliProcess, CliProcess, CliProcess];
      try {
        await Promise.all(
          [killed, frozen, steady].map((p) => p.waitForLine(/"event":"ready"/, EVENT_TIMEOUT_MS)),
        );
        await waitFor('some progress', () => acks(steady, 'acked').length >= 50, {
          timeoutMs: EVENT_TIMEOUT_MS,
        });
        await killed.waitForLine(/"event":"received"/, EVENT_TIMEOUT_MS);
        killed.kill('SIGKILL');
        await freezeHoldingMessages(lh, frozen);
        const frozenAt = Date.now();
        // Frozen until its messages' visibility has passed and others have taken them.
        await waitFor(
          'the frozen messages taken by the steady process',
          () => Date.now() - frozenAt > 3 * VISIBILITY_MS,
          { timeoutMs: EVENT_TIMEOUT_MS },
        );
        frozen.kill('SIGCONT');
        await waitFor(
          'every message acked',
          async () =>
            (await lh.engine.jobList({ queue: 'pull', limit: 2 * MESSAGES, offset: 0 })).every(
              (j) => j.status === 'completed',
            ),
          { timeoutMs: 4 * EVENT_TIMEOUT_MS, intervalMs: 250 },
        );
        const jobs = await lh.engine.jobList({ queue: 'pull', limit: 2 * MESSAGES, offset: 0 });
        assert.equal(jobs.length, MESSAGES);
        const accepted = [killed, frozen, steady].flatMap((p) => acks(p, 'acked'));
        const byId = new Map<number, AckEvent[]>();
        for (const a of accepted) byId.set(a.id, [...(byId.get(a.id) ?? []), a]);
        for (const job of jobs) {
          const mine = byId.get(job.id) ?? [];
          // A killed process may have acked a message whose answer it never printed: at most one.
          assert.ok(mine.length <= 1, `job ${job.id} acked ${mine.length} times`);
          if (mine[0])
            assert.equal(mine[0].token, job.generation, `job ${job.id}: the valid token`);
        }
        const refused = acks(frozen, 'refused');
        assert.ok(refused.length > 0, 'the frozen process tried late acks, and they were refused');
        for (const r of refused) {
          const job = jobs.find((j) => j.id === r.id)!;
          assert.ok(job.generation > r.token, `job ${r.id}: refused token ${r.token} is stale`);
        }
        const redelivered = jobs.filter((j) => j.attempts > 1).length;
        console.log(
          `# ${MESSAGES} messages, ${accepted.length} acks accepted, ${refused.length} refused, ${redelivered} delivered more than once`,
        );
      } finally {
        for (const p of [killed, frozen, steady]) p.kill('SIGKILL');
        await maintainer.stop();
      }
    }));
});
