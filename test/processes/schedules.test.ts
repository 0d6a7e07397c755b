// Schedules across real processes on PostgreSQL. Mode lock: two instances with a 1 s period
// run 20 slots, none twice, counted in the database (each run inserts a row), and every slot in
// between ran, or both instances reported skipping it: a wake-up so late the slot had passed
// (`missed`), or the previous run still going (`busy`, `locked`), which a busy machine causes
// and the schedule's contract allows. Mode leader: only the leader runs, and killing it moves
// the schedule to the other instance.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { startScript, type CliProcess } from '../support/cli-process.js';
import { closeTestDatabase, withSchema, type SchemaContext } from '../support/database.js';
import { EVENT_TIMEOUT_MS } from '../support/timing.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

const FIXTURE = new URL('./fixtures/toolkit-instance.ts', import.meta.url).pathname;
const EVERY_MS = 1_000;
const RUN_SLOTS = 20;

interface Effect {
  slot: Date;
  instance_id: string;
  token: string;
  ran_at: Date;
}

async function setUp(ctx: SchemaContext) {
  const engine = await ctx.engine();
  await engine.pool.query(
    `CREATE TABLE "${ctx.schema}".effects (slot timestamptz NOT NULL, instance_id text NOT NULL,
       token bigint NOT NULL, ran_at timestamptz NOT NULL DEFAULT clock_timestamp())`,
  );
  return {
    engine,
    effects: async (): Promise<Effect[]> =>
      (await engine.pool.query<Effect>(`SELECT * FROM "${ctx.schema}".effects ORDER BY slot`)).rows,
  };
}

function start(ctx: SchemaContext, id: string, env: Record<string, string>): CliProcess {
  return startScript(FIXTURE, [], {
    DATABASE_URL: ctx.url,
    SCHEMA: ctx.schema,
    INSTANCE_ID: id,
    ROLE: 'schedule',
    EVERY_MS: String(EVERY_MS),
    ...env,
  });
}

function events(proc: CliProcess, name: string): Record<string, unknown>[] {
  return proc.lines
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((e) => e['event'] === name);
}

async function claimedSlots(engine: PostgresEngine): Promise<number[]> {
  const claims = await engine.scheduleSlotList({ name: 'processes', limit: 1000 });
  return claims.map((c) => c.slot.getTime()).sort((x, y) => x - y);
}

/**
 * One claim per run. A claim may lack its run only when the process stopped between the claim
 * and the task's first write (killed, or closed during the claim): at most one such slot.
 */
function assertClaimsMatch(claims: number[], ran: number[]): void {
  const missing = ran.filter((slot) => !claims.includes(slot));
  assert.deepEqual(missing, [], 'every run has its claim');
  const unrun = claims.filter((slot) => !ran.includes(slot));
  assert.ok(unrun.length <= 1, `claims without a run: ${unrun.join(', ')}`);
}

/** Whether `proc` reported not running `slot`: skipped by a late wake-up, or busy or locked. */
function skipped(proc: CliProcess, slot: number): boolean {
  const missed = events(proc, 'missed').some(
    (e) => Date.parse(e['from'] as string) <= slot && slot < Date.parse(e['until'] as string),
  );
  const declined = events(proc, 'slot').some(
    (e) =>
      Date.parse(e['slot'] as string) === slot &&
      (e['outcome'] === 'busy' || e['outcome'] === 'locked'),
  );
  return missed || declined;
}

async function stopAll(procs: CliProcess[]): Promise<void> {
  for (const p of procs) p.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited()));
}

describe('schedules across processes', { concurrency: 2 }, () => {
  it('runs 20 slots of 1 s with two instances in mode lock, each once, none lost unreported', () =>
    withSchema('schedule processes lock', async (ctx) => {
      const { engine, effects } = await setUp(ctx);
      const procs = ['a', 'b'].map((id) => start(ctx, id, { MODE: 'lock', TASK_MS: '300' }));
      try {
        await Promise.all(procs.map((p) => p.waitForLine(/"event":"started"/, EVENT_TIMEOUT_MS)));
        const from = Date.now();
        const firstDue = Math.ceil(from / EVERY_MS) * EVERY_MS;
        // Twenty runs counted in the database, however long a busy machine takes over them.
        await waitFor(
          `${RUN_SLOTS} runs`,
          async () =>
            (await effects()).filter((r) => r.slot.getTime() >= firstDue).length >= RUN_SLOTS,
          { timeoutMs: 2 * RUN_SLOTS * EVERY_MS + EVENT_TIMEOUT_MS, intervalMs: 200 },
        );
        for (const p of procs) p.kill('SIGTERM');
        const exits = await Promise.all(procs.map((p) => p.exited()));
        assert.deepEqual(exits, [
          { code: 0, signal: null },
          { code: 0, signal: null },
        ]);

        const runs = await effects();
        const slots = runs.map((r) => r.slot.getTime());
        assert.equal(new Set(slots).size, slots.length, 'no slot ran twice');
        // From the first slot due after both started to the last one run.
        const inWindow = slots.filter((slot) => slot >= firstDue);
        assert.ok(inWindow.length >= RUN_SLOTS, `${inWindow.length} slots ran`);
        const last = slots.at(-1)!;
        const notRun: number[] = [];
        for (let slot = firstDue; slot <= last; slot += EVERY_MS) {
          if (slots.includes(slot)) continue;
          notRun.push(slot);
          for (const [i, p] of procs.entries())
            assert.ok(
              skipped(p, slot),
              `slot ${new Date(slot).toISOString()} did not run and instance ${'ab'[i]} did not report skipping it`,
            );
        }
        assert.ok(
          notRun.length <= inWindow.length / 2,
          `most slots ran: ${inWindow.length} ran, ${notRun.length} skipped by both`,
        );
        assertClaimsMatch(await claimedSlots(engine), slots);
        const count = (id: string) => runs.filter((r) => r.instance_id === id).length;
        console.log(
          `# lock mode: ${slots.length} slots ran (a ${count('a')}, b ${count('b')}), ${notRun.length} skipped by both`,
        );
      } finally {
        await stopAll(procs);
      }
    }));

  it('runs only on the leader in mode leader, and moves to the other instance when it is killed', () =>
    withSchema('schedule processes leader', async (ctx) => {
      const { engine, effects } = await setUp(ctx);
      const env = { MODE: 'leader', TASK_MS: '100', TTL_MS: '2000' };
      const procs = ['a', 'b'].map((id) => start(ctx, id, { ...env }));
      const [a, b] = procs as [CliProcess, CliProcess];
      try {
        await Promise.all(procs.map((p) => p.waitForLine(/"event":"started"/, EVENT_TIMEOUT_MS)));
        const leader = await waitFor(
          'a leader',
          () => procs.find((p) => events(p, 'elected').length > 0),
          { timeoutMs: EVENT_TIMEOUT_MS },
        );
        const follower = leader === a ? b : a;
        const leaderId = leader === a ? 'a' : 'b';
        const followerId = leader === a ? 'b' : 'a';
        await waitFor('three runs', async () => (await effects()).length >= 3, {
          timeoutMs: EVENT_TIMEOUT_MS,
        });
        const beforeKill = await effects();
        assert.deepEqual(
          [...new Set(beforeKill.map((r) => r.instance_id))],
          [leaderId],
          'only the leader ran',
        );
        assert.ok(
          events(follower, 'slot').every((e) => e['outcome'] === 'not-leader'),
          'the follower stood by',
        );

        const killedAt = Date.now();
        leader.kill('SIGKILL');
        await waitFor(
          'three runs on the other instance',
          async () => (await effects()).filter((r) => r.instance_id === followerId).length >= 3,
          { timeoutMs: EVENT_TIMEOUT_MS },
        );
        const runs = await effects();
        const moved = runs.filter((r) => r.instance_id === followerId);
        const firstMoved = moved[0]!.ran_at;
        console.log(
          `# leader mode: first run on the new leader ${firstMoved.getTime() - killedAt} ms after the kill (ttl 2000 ms, every ${EVERY_MS} ms)`,
        );
        const slots = runs.map((r) => r.slot.getTime());
        assert.equal(new Set(slots).size, slots.length, 'no slot ran twice');
        const oldToken = Math.max(...beforeKill.map((r) => Number(r.token)));
        assert.ok(
          moved.every((r) => Number(r.token) > oldToken),
          'the new leader runs under a newer token',
        );
        assertClaimsMatch(
          await claimedSlots(engine),
          slots.sort((x, y) => x - y),
        );
      } finally {
        await stopAll(procs);
      }
    }));
});
