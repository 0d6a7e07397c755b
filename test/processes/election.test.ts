// Leader election across three real processes on PostgreSQL: SIGKILL the leader and another
// leads once its term has run out (after its trust deadline, within ttl + pollEvery and room
// for a busy machine); SIGSTOP the leader past its ttl and its trust deadline falls before anyone
// else is elected, and once resumed it does not act as leader; SIGTERM the leader and it hands
// over at once: the next leader is elected before the released term's trust deadline, which it
// could not be if it had waited for the term to expire. Tokens strictly increase across leaders.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startScript, type CliProcess } from '../support/cli-process.js';
import { closeTestDatabase, withSchema, type SchemaContext } from '../support/database.js';
import { EVENT_TIMEOUT_MS, SCHEDULING_SLACK_MS } from '../support/timing.js';

after(closeTestDatabase);

const FIXTURE = new URL('./fixtures/toolkit-instance.ts', import.meta.url).pathname;
// Long enough that a release is told from an expiry by ordering alone on a busy machine: the
// next leader must be elected within about ttl - renewEvery of the release, not 1.5 s.
const TTL_MS = 6_000;
const RENEW_EVERY_MS = 500;
const POLL_EVERY_MS = 500;

interface Event {
  event: string;
  at: number;
  token?: number;
  trustedUntil?: number;
  leader?: string;
  code?: string;
}

interface Instance {
  id: string;
  proc: CliProcess;
  events(name?: string): Event[];
  next(name: string, after: number, timeoutMs?: number): Promise<Event>;
}

function start(ctx: SchemaContext, id: string): Instance {
  const proc = startScript(FIXTURE, [], {
    DATABASE_URL: ctx.url,
    SCHEMA: ctx.schema,
    INSTANCE_ID: id,
    ROLE: 'elect',
    TTL_MS: String(TTL_MS),
    RENEW_EVERY_MS: String(RENEW_EVERY_MS),
    POLL_EVERY_MS: String(POLL_EVERY_MS),
  });
  const events = (name?: string): Event[] =>
    proc.lines
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Event)
      .filter((e) => name === undefined || e.event === name);
  return {
    id,
    proc,
    events,
    /** The first `name` event at or after `after` (wall ms), waiting for it if need be. */
    async next(name, after, timeoutMs = EVENT_TIMEOUT_MS) {
      const found = (): Event | undefined => events(name).find((e) => e.at >= after);
      await proc.waitForLine(new RegExp(`"event":"${name}"`), timeoutMs);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const event = found();
        if (event) return event;
        if (Date.now() > deadline)
          throw new Error(
            `${id}: no "${name}" after ${after}:\n${proc.lines.slice(-15).join('\n')}`,
          );
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

/** The first instance among `candidates` to report `elected` at or after `after`. */
async function nextLeader(candidates: Instance[], after: number): Promise<[Instance, Event]> {
  return Promise.any(
    candidates.map(async (c) => [c, await c.next('elected', after)] as [Instance, Event]),
  );
}

/** The trust deadline the instance last reported, in its newest elected or renewed line. */
function lastTrustedUntil(instance: Instance): number {
  const lines = instance.events().filter((e) => e.event === 'elected' || e.event === 'renewed');
  const last = lines.at(-1);
  assert.ok(last?.trustedUntil, `${instance.id} reported a trust deadline`);
  return last.trustedUntil;
}

describe('leader election across processes', () => {
  it('fails over on SIGKILL, steps down on its own deadline when frozen, hands over on SIGTERM', () =>
    withSchema('election processes', async (ctx) => {
      await ctx.engine(); // migrates the schema once, before the children race to
      const all = ['a', 'b', 'c'].map((id) => start(ctx, id));
      try {
        const t0 = Date.now();
        await Promise.all(
          all.map((i) => i.proc.waitForLine(/"event":"started"/, EVENT_TIMEOUT_MS)),
        );

        // One leader, seen by all.
        const [first, firstElected] = await nextLeader(all, 0);
        for (const i of all)
          assert.equal(
            (await i.next('new-leader', t0)).leader,
            first.id,
            `${i.id} sees ${first.id}`,
          );
        assert.equal(
          all.filter((i) => i.events('elected').length > 0).length,
          1,
          'exactly one was elected',
        );
        const tokens = [firstElected.token!];

        // 1. SIGKILL the leader: another leads once the dead one's term has run out, by itself.
        const rest = all.filter((i) => i !== first);
        const killedAt = Date.now();
        first.proc.kill('SIGKILL');
        const [second, secondElected] = await nextLeader(rest, killedAt);
        const killTakeover = secondElected.at - killedAt;
        tokens.push(secondElected.token!);
        console.log(
          `# takeover after SIGKILL: ${killTakeover} ms (ttl ${TTL_MS} ms, pollEvery ${POLL_EVERY_MS} ms)`,
        );
        const deadLeaderDeadline = lastTrustedUntil(first);
        assert.ok(
          secondElected.at >= deadLeaderDeadline,
          `elected at ${secondElected.at}, not before the dead leader's trust deadline ${deadLeaderDeadline}`,
        );
        assert.ok(
          killTakeover <= TTL_MS + POLL_EVERY_MS + SCHEDULING_SLACK_MS,
          `took over ${killTakeover} ms after the kill (ttl ${TTL_MS} ms)`,
        );

        // 2. SIGSTOP the leader past its ttl: the other is elected once the term expires; the
        //    frozen one's trust deadline had passed by then, and after SIGCONT it does not act.
        const third = rest.find((i) => i !== second)!;
        await second.next('renewed', secondElected.at); // a renewal or two, then freeze
        const stoppedAt = Date.now();
        second.proc.kill('SIGSTOP');
        const thirdElected = await third.next('elected', stoppedAt);
        tokens.push(thirdElected.token!);
        // Read now: everything the frozen process wrote before the stop has arrived by now.
        const deadline = lastTrustedUntil(second);
        console.log(
          `# takeover after SIGSTOP: ${thirdElected.at - stoppedAt} ms; the frozen leader's trust deadline came ${thirdElected.at - deadline} ms before it`,
        );
        assert.ok(
          deadline <= thirdElected.at,
          `the frozen leader's deadline (${deadline}) is no later than the new election (${thirdElected.at})`,
        );
        await new Promise((r) => setTimeout(r, 200)); // frozen a little past the takeover
        const resumedAt = Date.now();
        second.proc.kill('SIGCONT');
        const fired = await second.next('signal', stoppedAt);
        assert.equal(fired.code, 'lease_lost', 'its signal fired with lease_lost');
        await second.next('revoked', stoppedAt);
        assert.equal((await second.next('new-leader', resumedAt)).leader, third.id);
        await new Promise((r) => setTimeout(r, 300)); // a few of its 50 ms work ticks
        const late = second.events('work').filter((e) => e.at >= deadline);
        assert.deepEqual(late, [], 'no work from the frozen leader past its deadline');
        assert.ok(
          third.events('work').some((e) => e.at > thirdElected.at),
          'the new leader works',
        );

        // 3. SIGTERM the leader: it releases at once and the other leads without waiting for
        //    expiry: elected before the released term's trust deadline, which comes before its
        //    expiry, so only the release can have let it in.
        const termAt = Date.now();
        third.proc.kill('SIGTERM');
        const closing = await third.next('closing', termAt);
        const releasedDeadline = lastTrustedUntil(third);
        const handover = await second.next('elected', termAt);
        tokens.push(handover.token!);
        const handoverMs = handover.at - closing.at;
        console.log(
          `# hand-over after SIGTERM: ${handoverMs} ms, ${releasedDeadline - handover.at} ms before the released term's trust deadline`,
        );
        assert.ok(
          handover.at < releasedDeadline,
          `handed over at ${handover.at}, before the released term's trust deadline ${releasedDeadline}`,
        );
        assert.deepEqual(await third.proc.exited(), { code: 0, signal: null });

        for (let i = 1; i < tokens.length; i++)
          assert.ok(tokens[i]! > tokens[i - 1]!, `tokens strictly increase: ${tokens.join(' < ')}`);
      } finally {
        for (const i of all) {
          i.proc.kill('SIGCONT');
          i.proc.kill('SIGKILL');
        }
        await Promise.all(all.map((i) => i.proc.exited()));
      }
    }));
});
