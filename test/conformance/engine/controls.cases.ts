import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { conformanceCase, type EngineHarness } from '../harness.js';

export function controlEngineCases(h: EngineHarness): void {
  describe(`[${h.name}] engine: controls`, () => {
    conformanceCase(h, 'answers null for a control never set', async ({ engine }) => {
      assert.equal(await engine.controlGet({ name: 'generator' }), null);
    });

    conformanceCase(
      h,
      'creates a control on first set, stamped with the engine clock and the setter',
      async ({ engine, clock }) => {
        const set = await engine.controlSet({
          name: 'generator',
          value: { running: true, rate: 5, tags: ['a', 'b'], nested: { deep: null } },
          updatedBy: 'instance-a',
        });
        const expected = {
          name: 'generator',
          value: { running: true, rate: 5, tags: ['a', 'b'], nested: { deep: null } },
          updatedAt: clock.now(),
          updatedBy: 'instance-a',
        };
        assert.deepEqual(set, expected);
        assert.deepEqual(await engine.controlGet({ name: 'generator' }), expected);
      },
    );

    conformanceCase(
      h,
      'replaces the whole value on a later set (not a merge), with the new time and setter',
      async ({ engine, clock }) => {
        await engine.controlSet({ name: 'c', value: { a: 1, b: 2 }, updatedBy: 'x' });
        await clock.advance(1_500);
        const replaced = await engine.controlSet({ name: 'c', value: { b: 3 }, updatedBy: 'y' });
        assert.deepEqual(replaced.value, { b: 3 });
        assert.equal(replaced.updatedBy, 'y');
        assert.equal(replaced.updatedAt.getTime(), clock.now().getTime());
        assert.deepEqual(await engine.controlGet({ name: 'c' }), replaced);
      },
    );

    conformanceCase(
      h,
      'keeps controls of different names apart, and answers copies the caller cannot change',
      async ({ engine }) => {
        const value = { running: false };
        await engine.controlSet({ name: 'one', value, updatedBy: 'x' });
        await engine.controlSet({ name: 'two', value: { running: true }, updatedBy: 'x' });
        value.running = true; // the caller's object, changed after the set
        const one = await engine.controlGet({ name: 'one' });
        assert.deepEqual(one?.value, { running: false });
        (one!.value as { running: boolean }).running = true; // an answer, changed by its reader
        assert.deepEqual((await engine.controlGet({ name: 'one' }))?.value, { running: false });
        assert.deepEqual((await engine.controlGet({ name: 'two' }))?.value, { running: true });
      },
    );

    conformanceCase(
      h,
      'shows a set made through one engine to its peer',
      async ({ engine, peer }) => {
        const other = await peer();
        await engine.controlSet({ name: 'generator', value: { running: false }, updatedBy: 'a' });
        assert.deepEqual((await other.controlGet({ name: 'generator' }))?.value, {
          running: false,
        });
        await other.controlSet({ name: 'generator', value: { running: true }, updatedBy: 'b' });
        const seen = await engine.controlGet({ name: 'generator' });
        assert.deepEqual(seen?.value, { running: true });
        assert.equal(seen?.updatedBy, 'b');
      },
    );
  });
}
