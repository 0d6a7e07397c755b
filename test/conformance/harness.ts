/**
 * One conformance suite, every engine. Cases are written once against `EngineHarness`, and
 * each `<engine>.test.ts` file runs all of them on its engine. Both engines run on a ManualClock
 * (PostgreSQL has its `now` pinned to it), so expiry is exact and no case sleeps.
 *
 * A case an engine cannot run is declared with `requires` naming the capability it needs; the
 * runner reports it as skipped with that reason, never silently.
 */
import { it } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import type { Engine, EngineCapabilities } from '../../src/engine/engine.js';
import { MemoryEngine } from '../../src/engine/memory/memory-engine.js';
import { Leasehold } from '../../src/leasehold.js';
import { withSchema } from '../support/database.js';

export interface CaseContext {
  engine: Engine;
  clock: ManualClock;
  lh: Leasehold;
  /** A second engine on the same state (another process, for PostgreSQL; the same object for memory). */
  peer(): Promise<Engine>;
}

export interface EngineHarness {
  readonly name: 'memory' | 'postgres';
  readonly capabilities: EngineCapabilities;
  run(testName: string, fn: (ctx: CaseContext) => Promise<void>): Promise<void>;
}

export const memoryHarness: EngineHarness = {
  name: 'memory',
  capabilities: new MemoryEngine().capabilities,
  async run(_testName, fn) {
    const clock = new ManualClock();
    const engine = new MemoryEngine({ clock });
    try {
      await fn({ engine, clock, lh: Leasehold.fromEngine(engine), peer: async () => engine });
    } finally {
      await engine.close();
    }
  },
};

export const postgresHarness: EngineHarness = {
  name: 'postgres',
  capabilities: {
    crossProcess: true,
    advisoryLocks: true,
    sessionLocks: true,
    notifications: true,
    callerTransactions: true,
  },
  async run(testName, fn) {
    await withSchema(testName, async (schema) => {
      const clock = new ManualClock();
      const engine = await schema.engine({ clock });
      await fn({
        engine,
        clock,
        lh: Leasehold.fromEngine(engine),
        peer: () => schema.engine({ clock }),
      });
    });
  },
};

export interface CaseOptions {
  /** Capabilities the case needs; engines lacking one report the case as skipped, with the reason. */
  requires?: (keyof EngineCapabilities)[];
}

/** Declares a conformance case for one engine. */
export function conformanceCase(
  harness: EngineHarness,
  name: string,
  fn: (ctx: CaseContext) => Promise<void>,
  options: CaseOptions = {},
): void {
  const missing = (options.requires ?? []).filter((c) => !harness.capabilities[c]);
  if (missing.length > 0) {
    it(name, { skip: `${harness.name} engine lacks capability: ${missing.join(', ')}` }, () => {});
    return;
  }
  it(name, () => harness.run(name, fn));
}
