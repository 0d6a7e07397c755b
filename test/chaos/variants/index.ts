/**
 * Engine variants the harness can run: the real PostgresEngine, or one of the deliberately
 * broken subclasses (each overrides one operation with an unguarded statement, or, for
 * async-commit, gives up durability) that prove the checkers find what they claim to find.
 */
import {
  PostgresEngine,
  type PostgresEngineOptions,
} from '../../../src/engine/postgres/postgres-engine.js';
import { AsyncCommitEngine } from './async-commit.js';
import { RenewWithoutExpiryEngine } from './renew-without-expiry.js';
import { SessionTokenInTransactionEngine } from './session-token-in-transaction.js';
import { UnguardedCompleteEngine } from './unguarded-complete.js';
import { LostEnqueueAnswerRetriedEngine } from './lost-enqueue-answer-retried.js';
import { NoEpochEngine } from './no-epoch.js';
import { UnloggedLeasesEngine } from './unlogged-leases.js';
import { WorkerSideLimitsEngine } from './worker-side-limits.js';
import { UnguardedStepEngine } from './unguarded-step.js';

export const VARIANTS = [
  'real',
  'unguarded-complete',
  'session-token-in-transaction',
  'renew-without-expiry',
  'async-commit',
  // Decision 0220: the producer role's coalesced enqueues (child/roles/producer.ts).
  'lost-enqueue-answer-retried',
  'unordered-enqueue',
  // Decision 0226: failover runs (`--failover async`).
  'no-epoch',
  // Decision 0230: a token handed out again after a crash of the server.
  'unlogged-leases',
  // Decision 0239: flow control counted by each worker instead of the claim in the database.
  'worker-side-limits',
  // Decision 0256: a workflow step recorded without its ownership guard.
  'unguarded-step',
] as const;
export type Variant = (typeof VARIANTS)[number];

export function isVariant(name: string): name is Variant {
  return (VARIANTS as readonly string[]).includes(name);
}

export function createEngine(
  variant: Variant,
  options: PostgresEngineOptions & { connectionString: string },
): PostgresEngine {
  switch (variant) {
    case 'real':
      return new PostgresEngine(options);
    case 'unguarded-complete':
      return new UnguardedCompleteEngine(options);
    case 'session-token-in-transaction':
      return new SessionTokenInTransactionEngine(options);
    case 'renew-without-expiry':
      return new RenewWithoutExpiryEngine(options);
    case 'async-commit':
      return new AsyncCommitEngine(options);
    case 'lost-enqueue-answer-retried':
      return new LostEnqueueAnswerRetriedEngine(options);
    case 'unordered-enqueue':
      // The engine is the real one: the producer role builds its coalescer without order keys.
      return new PostgresEngine(options);
    case 'no-epoch':
      return new NoEpochEngine(options);
    case 'unlogged-leases':
      return new UnloggedLeasesEngine(options);
    case 'worker-side-limits':
      return new WorkerSideLimitsEngine(options);
    case 'unguarded-step':
      return new UnguardedStepEngine(options);
  }
}
