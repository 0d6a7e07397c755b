/**
 * One conformance suite, every engine. Cases are written once against `EngineHarness`, and
 * each `<engine>.test.ts` file registers one harness and runs all of them on its engine
 * (`defineAllCases(harness)`): adding an engine to the suite is that one file. Engines run on
 * a ManualClock (PostgreSQL has its `now` pinned to it), so expiry is exact and no case sleeps.
 *
 * A case an engine cannot run is declared with `requires` naming the capability it needs. The
 * capabilities are the engine's own (`engine.capabilities`), read from the first engine the
 * harness builds, so no table here can disagree with the engine; the runner reports a case
 * lacking one as skipped with that reason, never silently. A case that reaches into one
 * engine's own machinery (PostgreSQL's pool, pg_terminate_backend) names it with `engine`.
 */
import { it } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import type { Engine, EngineCapabilities } from '../../src/engine/engine.js';
import { MemoryEngine } from '../../src/engine/memory/memory-engine.js';
import {
  PostgresEngine,
  type PostgresEngineOptions,
} from '../../src/engine/postgres/postgres-engine.js';
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
  /** Shown in every case's name: the engine, and its configuration when it has several. */
  readonly name: string;
  /** Capabilities every case of this view needs (see `requiring`). */
  readonly requires?: readonly (keyof EngineCapabilities)[];
  /** Builds a fresh engine on `clock`, runs `fn`, and cleans up (engines closed, state dropped). */
  run(testName: string, fn: (ctx: CaseContext) => Promise<void>): Promise<void>;
}

/** The same harness, whose every case also needs `capabilities` (for a family's describe block). */
export function requiring(
  harness: EngineHarness,
  ...capabilities: (keyof EngineCapabilities)[]
): EngineHarness {
  return { ...harness, requires: [...(harness.requires ?? []), ...capabilities] };
}

export const memoryHarness: EngineHarness = {
  name: 'memory',
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

type PostgresHarnessOptions = Omit<PostgresEngineOptions, 'schema' | 'clock' | 'pool'>;

/**
 * PostgreSQL on a fresh schema per case. `connect` gives the engine options (by default: the
 * test database, directly); a harness behind pgbouncer gives its own connection string.
 */
export function postgresHarness(
  name: string,
  connect?: (databaseUrl: string) => Promise<PostgresHarnessOptions>,
): EngineHarness {
  return {
    name,
    async run(testName, fn) {
      await withSchema(testName, async (schema) => {
        const clock = new ManualClock();
        const options = connect ? await connect(schema.url) : {};
        const engines: PostgresEngine[] = [];
        const engine = async (): Promise<PostgresEngine> => {
          if (!connect) return schema.engine({ clock });
          const made = new PostgresEngine({
            poolSize: 4,
            ...options,
            schema: schema.schema,
            clock,
          });
          engines.push(made);
          await made.migrate();
          return made;
        };
        try {
          const first = await engine();
          await fn({ engine: first, clock, lh: Leasehold.fromEngine(first), peer: engine });
        } finally {
          await Promise.all(engines.map((e) => e.close().catch(() => {})));
        }
      });
    },
  };
}

export interface CaseOptions {
  /** Capabilities the case needs; engines lacking one report the case as skipped, with the reason. */
  requires?: (keyof EngineCapabilities)[];
  /** Capabilities the case is about the absence of; engines having one report it as skipped. */
  lacks?: (keyof EngineCapabilities)[];
  /** The case reaches into this engine's own machinery: other engines report it as skipped. */
  engine?: string;
}

/** What each harness's engines were found to offer, once the first of them was built. */
const known = new WeakMap<
  EngineHarness['run'],
  { name: string; capabilities: EngineCapabilities }
>();

/** Why `engine` cannot run a case with these needs; null when it can. */
function unmet(
  engine: { name: string; capabilities: EngineCapabilities },
  needs: readonly (keyof EngineCapabilities)[],
  options: CaseOptions,
): string | null {
  if (options.engine !== undefined && engine.name !== options.engine)
    return `a case about the ${options.engine} engine's own machinery`;
  const missing = needs.filter((c) => !engine.capabilities[c]);
  if (missing.length > 0) return `${engine.name} engine lacks capability: ${missing.join(', ')}`;
  const present = (options.lacks ?? []).filter((c) => engine.capabilities[c]);
  if (present.length > 0)
    return `${engine.name} engine has capability: ${present.join(', ')} (the case is about its absence)`;
  return null;
}

/** Declares a conformance case for one engine. */
export function conformanceCase(
  harness: EngineHarness,
  name: string,
  fn: (ctx: CaseContext) => Promise<void>,
  options: CaseOptions = {},
): void {
  const needs = [...(harness.requires ?? []), ...(options.requires ?? [])];
  it(name, async (t) => {
    // Known from an earlier case: skip without building an engine (a schema, on PostgreSQL).
    const seen = known.get(harness.run);
    const before = seen && unmet(seen, needs, options);
    if (before) return t.skip(before);
    await harness.run(name, async (ctx) => {
      const { name: engineName, capabilities } = ctx.engine;
      known.set(harness.run, { name: engineName, capabilities });
      const reason = unmet(ctx.engine, needs, options);
      if (reason) return t.skip(reason);
      await fn(ctx);
    });
  });
}
