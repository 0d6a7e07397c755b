import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { InvalidArgumentError } from '../../../src/core/errors.js';
import type { Job, JobStatus } from '../../../src/core/types.js';
import type { Engine } from '../../../src/engine/engine.js';
import type { JobSearchPage } from '../../../src/engine/job-admin.js';
import type { JobSpec } from '../../../src/engine/jobs.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

const MINUTE = 60_000;

/**
 * The job explorer (issue 30 part 2, decision 0266): `lh.jobs.search` (each filter field
 * narrows, payload text, keyset pages both ways, a bounded scan that still answers `next`, the
 * total: a count when one page holds every match, never less than what was seen otherwise) and
 * `lh.jobs.actOn` (each id's outcome; bad input changes nothing).
 */
export function jobSearchCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: job search and selection`, () => {
    conformanceCase(
      h,
      'search: each filter field narrows, and the payload text matches ignoring case, % and _ literally',
      async ({ lh, engine, clock }) => {
        const t0 = clock.now().getTime();
        const [j1, j2] = await enqueue(
          engine,
          spec({ type: 'a', key: 'k1', partitionKey: 'p1', payload: { customer: 'Acme Ltd' } }),
          spec({ type: 'b', payload: { note: '100% off_sale' } }),
        );
        await clock.advance(MINUTE);
        const [j3, j4] = await enqueue(
          engine,
          spec({ type: 'a', payload: { customer: 'Globex', n: 42 } }),
          spec({ queue: 'other', type: 'a', key: 'k1', partitionKey: 'p1', payload: ['acme'] }),
        );
        await lh.jobs.cancel(j3!.id);
        const ids = async (options: Parameters<typeof lh.jobs.search>[0]) =>
          (await lh.jobs.search(options)).jobs.map((j) => j.id);

        assert.deepEqual(await ids({}), [j4!.id, j3!.id, j2!.id, j1!.id], 'newest first');
        assert.deepEqual(await ids({ queue: 'q' }), [j3!.id, j2!.id, j1!.id]);
        assert.deepEqual(await ids({ status: 'cancelled' }), [j3!.id]);
        assert.deepEqual(await ids({ status: ['cancelled', 'pending'], queue: 'other' }), [j4!.id]);
        assert.deepEqual(await ids({ type: 'b' }), [j2!.id]);
        assert.deepEqual(await ids({ key: 'k1' }), [j4!.id, j1!.id]);
        assert.deepEqual(await ids({ partitionKey: 'p1', queue: 'q' }), [j1!.id]);
        assert.deepEqual(await ids({ createdSince: new Date(t0 + MINUTE) }), [j4!.id, j3!.id]);
        assert.deepEqual(await ids({ createdBefore: new Date(t0 + MINUTE).toISOString() }), [
          j2!.id,
          j1!.id,
        ]);
        assert.deepEqual(await ids({ text: 'ACME' }), [j4!.id, j1!.id], 'ignoring case');
        assert.deepEqual(await ids({ text: 'globex' }), [j3!.id]);
        assert.deepEqual(await ids({ text: '"n": 42' }), [j3!.id], "jsonb's text: '\"n\": 42'");
        assert.deepEqual(await ids({ text: '100%' }), [j2!.id], '% is a character');
        assert.deepEqual(await ids({ text: '0% off_' }), [j2!.id]);
        assert.deepEqual(await ids({ text: 'o_f' }), [], '_ is a character, not any one');
        assert.deepEqual(await ids({ text: 'acme', type: 'a', queue: 'q' }), [j1!.id]);
      },
    );

    conformanceCase(
      h,
      'search: keyset pages newest and oldest first, each from the last page’s next, none repeated',
      async ({ lh, engine }) => {
        const jobs = await enqueue(engine, ...Array.from({ length: 5 }, () => spec()));
        await enqueue(engine, spec({ queue: 'other' }));
        const all = jobs.map((j) => j.id);
        const walk = async (order: 'newest' | 'oldest'): Promise<number[][]> => {
          const pages: number[][] = [];
          let cursor: number | undefined;
          for (;;) {
            const page = await lh.jobs.search({
              queue: 'q',
              order,
              limit: 2,
              ...(cursor ? { cursor } : {}),
            });
            pages.push(page.jobs.map((j) => j.id));
            if (page.next === null) return pages;
            cursor = page.next;
          }
        };
        assert.deepEqual(await walk('newest'), [[all[4], all[3]], [all[2], all[1]], [all[0]]]);
        assert.deepEqual(await walk('oldest'), [[all[0], all[1]], [all[2], all[3]], [all[4]]]);
      },
    );

    conformanceCase(
      h,
      'search: a page reads at most scanLimit jobs and answers next past them, though it found fewer than limit',
      async ({ engine }) => {
        const [hit1, , , , , hit2] = await enqueue(
          engine,
          spec({ type: 'hit' }),
          spec(),
          spec(),
          spec(),
          spec(),
          spec({ type: 'hit' }),
          spec(),
        );
        const search = (cursor?: number): Promise<JobSearchPage> =>
          engine.jobSearch({
            type: 'hit',
            order: 'newest',
            limit: 10,
            scanLimit: 3,
            ...(cursor ? { cursor } : {}),
          });
        const first = await search();
        assert.deepEqual(ids(first), [hit2!.id], 'the three newest jobs hold one match');
        assert.equal(first.next, hit2!.id - 1, 'the last job it read');
        const second = await search(first.next!);
        assert.deepEqual(ids(second), [], 'the next three hold none');
        assert.equal(second.next, hit1!.id + 1);
        const third = await search(second.next!);
        assert.deepEqual(ids(third), [hit1!.id]);
        assert.equal(third.next, null, 'it read the oldest job');
      },
    );

    conformanceCase(
      h,
      'search: the total is a count when the first page holds every match, else never less than the page',
      async ({ lh, engine }) => {
        await enqueue(engine, ...Array.from({ length: 6 }, () => spec({ type: 't' })));
        await enqueue(engine, spec({ type: 'u' }));
        const whole = await lh.jobs.search({ type: 't' });
        assert.equal(whole.jobs.length, 6);
        assert.equal(whole.total, 6);
        assert.equal(whole.totalExact, true);
        assert.equal(whole.next, null);
        const none = await lh.jobs.search({ type: 'nothing' });
        assert.deepEqual([none.total, none.totalExact, none.next], [0, true, null]);
        const paged = await lh.jobs.search({ type: 't', limit: 4 });
        assert.equal(paged.jobs.length, 4);
        assert.notEqual(paged.next, null);
        if (paged.totalExact) assert.equal(paged.total, 6);
        else
          assert.ok(paged.total >= 4, `an estimate, at least what the page shows: ${paged.total}`);
      },
    );

    conformanceCase(h, 'search: bad input is invalid_argument naming the field', async ({ lh }) => {
      const cases: [unknown, string][] = [
        [{ queue: '' }, 'queue'],
        [{ status: 'lost' }, 'status'],
        [{ status: [] }, 'status'],
        [{ text: '' }, 'text'],
        [{ text: 'x'.repeat(201) }, 'text'],
        [{ order: 'sideways' }, 'order'],
        [{ limit: 0 }, 'limit'],
        [{ limit: 1001 }, 'limit'],
        [{ cursor: -1 }, 'cursor'],
        [{ createdSince: 'yesterday' }, 'createdSince'],
        [{ createdSince: '2024-05-02', createdBefore: '2024-05-01' }, 'createdBefore'],
        [{ offset: 10 }, 'offset'],
      ];
      for (const [options, field] of cases)
        await assert.rejects(
          lh.jobs.search(options as never),
          (e: unknown) => e instanceof InvalidArgumentError && e.field === field,
          JSON.stringify(options),
        );
    });

    conformanceCase(
      h,
      'actOn: each id answers done, not_found or refused with its status, in the order given',
      async ({ lh, engine }) => {
        const [a, b, c] = await enqueue(engine, spec(), spec(), spec());
        await lh.jobs.cancel(a!.id);
        await lh.jobs.cancel(b!.id);
        const retried = await lh.jobs.actOn('retry', [b!.id, c!.id, 999_999, a!.id, b!.id]);
        assert.deepEqual(
          retried.map(({ id, outcome, status }) => ({ id, outcome, status })),
          [
            { id: b!.id, outcome: 'done', status: 'pending' },
            { id: c!.id, outcome: 'refused', status: 'pending' },
            { id: 999_999, outcome: 'not_found', status: undefined },
            { id: a!.id, outcome: 'done', status: 'pending' },
          ],
          'distinct ids, in order',
        );
        const cancelled = await lh.jobs.actOn('cancel', [a!.id, c!.id]);
        assert.deepEqual(
          cancelled.map((r) => [r.outcome, r.status]),
          [
            ['done', 'cancelled'],
            ['done', 'cancelled'],
          ],
        );
        const deleted = await lh.jobs.actOn('delete', [a!.id, 999_999]);
        assert.deepEqual(
          deleted.map((r) => r.outcome),
          ['done', 'not_found'],
        );
        assert.deepEqual(await statuses(engine, a, b, c), [undefined, 'pending', 'cancelled']);
      },
    );

    conformanceCase(
      h,
      'actOn: bad input is invalid_argument naming the field and changes nothing',
      async ({ lh, engine }) => {
        const [a] = await enqueue(engine, spec());
        await lh.jobs.cancel(a!.id);
        const cases: [unknown, unknown, string][] = [
          ['retry', [], 'ids'],
          ['retry', 'x', 'ids'],
          ['retry', [a!.id, 0], 'ids[1]'],
          ['retry', Array.from({ length: 501 }, (_, i) => i + 1), 'ids'],
          ['explode', [a!.id], 'action'],
        ];
        for (const [action, ids, field] of cases)
          await assert.rejects(
            lh.jobs.actOn(action as never, ids as never),
            (e: unknown) => e instanceof InvalidArgumentError && e.field === field,
            field,
          );
        assert.deepEqual(await statuses(engine, a), ['cancelled'], 'nothing retried');
      },
    );
  });
}

function ids(page: JobSearchPage): number[] {
  return page.jobs.map((j) => j.id);
}

function spec(overrides: Partial<JobSpec> = {}): JobSpec {
  return { queue: 'q', payload: {}, maxAttempts: 3, ...overrides };
}

async function enqueue(engine: Engine, ...specs: JobSpec[]): Promise<Job[]> {
  return (await engine.jobEnqueue({ jobs: specs })).map((o) => o.job);
}

/** Each job's status now, undefined when it is gone. */
async function statuses(
  engine: Engine,
  ...jobs: (Job | undefined)[]
): Promise<(JobStatus | undefined)[]> {
  return Promise.all(jobs.map(async (job) => (await engine.jobGet({ id: job!.id }))?.status));
}
