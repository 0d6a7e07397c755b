/**
 * A measurement family (burn-down, enqueue, latency…) and the round-robin that runs its
 * systems: every round runs each system once, starting one further along the list each round,
 * so no system always runs first (on a cold cache) or last (after the others' autovacuum debt).
 */
import type { BenchCounts } from './counts.js';
import type { BenchDatabase } from './database.js';
import type { ResultSet } from './results.js';

export interface FamilyContext {
  readonly db: BenchDatabase;
  readonly counts: BenchCounts;
  readonly repeat: number;
  readonly results: ResultSet;
  /** A progress line (stderr): the report itself goes to stdout. */
  progress(line: string): void;
}

export interface Family {
  /** The name `--only` takes. */
  readonly name: string;
  readonly title: string;
  /** One paragraph printed above the family's table. */
  readonly about: (ctx: FamilyContext) => string;
  run(ctx: FamilyContext): Promise<void>;
}

export interface BenchSystem {
  readonly name: string;
  /** Runs once, records its samples, and returns a short description for the progress line. */
  run(): Promise<string>;
}

export async function roundRobin(
  ctx: FamilyContext,
  family: string,
  systems: readonly BenchSystem[],
): Promise<void> {
  for (let round = 0; round < ctx.repeat; round++) {
    for (let k = 0; k < systems.length; k++) {
      const system = systems[(k + round) % systems.length]!;
      const started = performance.now();
      const what = await system.run();
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      ctx.progress(
        `${family} [round ${round + 1}/${ctx.repeat}] ${system.name}: ${what} (${seconds} s)`,
      );
    }
  }
}
