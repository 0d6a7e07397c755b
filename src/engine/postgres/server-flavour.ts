/**
 * Which engine answers on the PostgreSQL protocol, and whether connection locks can be trusted
 * on it (issue 22, decision 0227).
 *
 * Connection locks (advisory locks and session locks) rest on two server guarantees: an advisory
 * lock excludes every other session, and a row locked by `SELECT ... FOR UPDATE` stays locked
 * until its transaction ends. CockroachDB keeps neither: its session-level `pg_advisory_lock`
 * family is defined with no-op implementations (every caller "gets" the lock), and under its
 * default SERIALIZABLE isolation a `FOR UPDATE` lock is best-effort, released early on a
 * leaseholder transfer or a node loss. A lock that silently excludes nobody is worse than none,
 * so leasehold refuses connection locks there with `unsupported` and points at lease locks, which
 * need only rows and transactions.
 *
 * The engine is read from `SELECT version()` once per engine: CockroachDB answers
 * "CockroachDB CCL v24.3.0 (...)" (it reports a PostgreSQL `server_version`, so that setting
 * cannot tell), YugabyteDB "PostgreSQL 15.2-YB-2025.1.0.0-b0 ...".
 */
import { UnsupportedError } from '../../core/errors.js';
import type { PgContext } from './context.js';

export type ServerFlavour = 'postgresql' | 'cockroachdb' | 'yugabytedb';

/** The engine whose `SELECT version()` answered `version`. */
export function serverFlavour(version: string): ServerFlavour {
  const text = version.trim();
  if (/^CockroachDB\b/i.test(text)) return 'cockroachdb';
  // YugabyteDB keeps PostgreSQL's banner and tags the version: "PostgreSQL 11.2-YB-2.20.1.0-b97".
  if (/^PostgreSQL \d+(?:\.\d+)*-YB-/.test(text)) return 'yugabytedb';
  return 'postgresql';
}

/**
 * Why connection locks (advisory and session locks) cannot be trusted on `flavour`, or
 * undefined when they can. YugabyteDB is not refused: from 2.20 it raises an error on advisory
 * locks unless they are enabled (real ones from 2.25.1), so nothing passes silently there unless
 * an operator sets `yb_silence_advisory_locks_not_supported_error` (see docs/deployment.md).
 */
export function connectionLocksRefusal(flavour: ServerFlavour): string | undefined {
  if (flavour !== 'cockroachdb') return undefined;
  return (
    'CockroachDB does not keep connection locks: its session advisory lock functions are ' +
    'no-ops and its SELECT FOR UPDATE locks are best-effort under SERIALIZABLE isolation; ' +
    'use lease locks (locks.lease(...)), which need only rows and transactions'
  );
}

// One read of version() per engine: the context is the engine's, and a server never changes
// its flavour behind a connection string (a failover promotes a server of the same engine).
const flavours = new WeakMap<PgContext, Promise<ServerFlavour>>();

/** The engine's server flavour, read once (a failed read is not remembered). */
export function readServerFlavour(ctx: PgContext): Promise<ServerFlavour> {
  let flavour = flavours.get(ctx);
  if (!flavour) {
    flavour = ctx
      .query<{ version: string }>('ServerVersion', 'SELECT version() AS version', [])
      .then(([row]) => serverFlavour(row?.version ?? ''));
    flavours.set(ctx, flavour);
    flavour.catch(() => flavours.delete(ctx));
  }
  return flavour;
}

/** Rejects with UnsupportedError when the server cannot keep connection locks (`feature`). */
export async function refuseUntrustedConnectionLocks(
  ctx: PgContext,
  feature: 'advisory locks' | 'session locks',
): Promise<void> {
  const reason = connectionLocksRefusal(await readServerFlavour(ctx));
  if (reason) throw new UnsupportedError(`${feature} are refused: ${reason}`);
}
