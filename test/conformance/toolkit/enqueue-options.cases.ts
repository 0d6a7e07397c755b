import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { isLeaseholdError } from '../../../src/core/errors.js';
import type { EnqueueOptions } from '../../../src/queue/enqueue-options.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

/**
 * `onConflict` and `debounce` through `lh.queue()` (decision 0252): the durations and the
 * checks of toJobSpec; what the engine then does is in engine/enqueue-conflicts.cases.ts.
 */
export function enqueueOptionCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: enqueue onConflict and debounce`, () => {
    conformanceCase(
      h,
      'debounces by key through lh.queue, and refuses bad input naming the field, writing nothing',
      async ({ lh, clock }) => {
        const queue = lh.queue('q');
        const bad: [EnqueueOptions, string][] = [
          [{ debounce: '1s' }, 'debounce'],
          [{ key: 'k', debounce: -5 }, 'debounce'],
          [{ key: 'k', debounce: 0 }, 'debounce'],
          [{ key: 'k', debounce: 'soon' }, 'debounce'],
          [{ key: 'k', debounce: '1s', delay: 10 }, 'debounce'],
          [{ key: 'k', debounce: '1s', runAt: new Date() }, 'debounce'],
          [{ key: 'k', debounce: '1s', onConflict: 'keep' }, 'onConflict'],
          [{ key: 'k', onConflict: 'merge' as never }, 'onConflict'],
          [{ key: 'k', onConflict: null as never }, 'onConflict'],
          [{ onConflict: 'replace' }, 'onConflict'],
        ];
        const invalid = (field: string) => (e: unknown) =>
          isLeaseholdError(e, 'invalid_argument') && e.details.field === field;
        for (const [options, field] of bad)
          await assert.rejects(queue.enqueue({}, options), invalid(field), JSON.stringify(options));
        await assert.rejects(
          queue.enqueueMany([
            { payload: 1, options: { key: 'a', debounce: '1s' } },
            { payload: 2, options: { debounce: '1s' } },
          ]),
          invalid('jobs[1].debounce'),
        );
        assert.deepEqual(await lh.jobs.list({ limit: 10 }), [], 'nothing written');

        const t0 = clock.now().getTime();
        const first = await queue.enqueue({ n: 1 }, { key: 'k', debounce: '2s' });
        assert.deepEqual([first.created, first.replaced], [true, false]);
        assert.equal(first.availableAt.getTime(), t0 + 2_000);
        await clock.advance(500);
        const [second, other] = await queue.enqueueMany([
          { payload: { n: 2 }, options: { key: 'k', debounce: 2_000, onConflict: 'replace' } },
          { payload: { n: 3 }, options: { key: 'k2', onConflict: 'keep' } },
        ]);
        assert.deepEqual([second!.created, second!.replaced], [false, true]);
        assert.equal(second!.id, first.id);
        assert.deepEqual(second!.payload, { n: 2 });
        assert.equal(second!.availableAt.getTime(), t0 + 2_500);
        assert.deepEqual([other!.created, other!.replaced], [true, false]);
      },
    );
  });
}
