/**
 * How long leasehold waits on PostgreSQL, in one place. A database that stops answering (a
 * partition, a frozen host) neither errors nor closes the socket, so every wait needs a bound of
 * its own or callers hang for as long as the OS keepalive takes to give up (hours):
 *
 * - a pool slot or a new connection: `connectTimeoutMs`;
 * - a statement: the server cancels it after `statementTimeoutMs`; the client gives up after
 *   `queryTimeoutMs` (a little longer, so a live server's own cancel comes first) and drops the
 *   connection, whose state it no longer knows;
 * - an idle socket: TCP keepalive after `keepAliveIdleMs`;
 * - a connection-bound lock (advisory, session): probed every `lockProbeIntervalMs`, lost when a
 *   probe is not answered within `lockProbeTimeoutMs`. Its holder hears of a silent server at
 *   most `lockProbeIntervalMs + lockProbeTimeoutMs` after the last answered probe was sent; the
 *   lock's session asks the server to give up on a silent client only after at least twice that
 *   (`lockSessionKeepalive`), so the holder is told before the server can free the lock.
 *
 * Waiting in a lock queue (`lock()` of advisory and session locks) is the one wait with no bound
 * here: it lasts until granted or cancelled by the caller's timeout or signal.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import { typeName } from '../../core/duration.js';

export interface ConnectionTimingOptions {
  /** Wait for a pool slot or a new connection (default 10 s). */
  connectTimeoutMs?: number;
  /** The server's `statement_timeout` on pool connections (default 10 s). */
  statementTimeoutMs?: number;
  /** The client's bound on any pooled statement's answer (default statementTimeoutMs + 2 s). */
  queryTimeoutMs?: number;
  /** TCP keepalive idle time on every connection (default 10 s; at least 1 s). */
  keepAliveIdleMs?: number;
  /** Probe interval of an advisory or session lock's connection (default 1 s). */
  lockProbeIntervalMs?: number;
  /** A lock probe not answered within this long means the lock is lost (default 2 s). */
  lockProbeTimeoutMs?: number;
}

export type ConnectionTiming = Required<ConnectionTimingOptions>;

export const CONNECTION_TIMING_DEFAULTS = {
  connectTimeoutMs: 10_000,
  statementTimeoutMs: 10_000,
  /** Added to the statement timeout for the default query timeout. */
  queryTimeoutSlackMs: 2_000,
  keepAliveIdleMs: 10_000,
  lockProbeIntervalMs: 1_000,
  lockProbeTimeoutMs: 2_000,
} as const;

/** The most any of these may be: a day (a longer "bound" is no bound at all). */
const MAX_MS = 86_400_000;

function milliseconds(field: string, value: unknown, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value))
    throw new InvalidArgumentError(
      field,
      `must be an integer number of ms, got ${typeName(value)}`,
    );
  if (value < min || value > MAX_MS)
    throw new InvalidArgumentError(field, `must be between ${min} and ${MAX_MS} ms, got ${value}`);
  return value;
}

export function resolveConnectionTiming(o: ConnectionTimingOptions): ConnectionTiming {
  const d = CONNECTION_TIMING_DEFAULTS;
  const statementTimeoutMs = milliseconds(
    'statementTimeoutMs',
    o.statementTimeoutMs,
    d.statementTimeoutMs,
  );
  return {
    connectTimeoutMs: milliseconds('connectTimeoutMs', o.connectTimeoutMs, d.connectTimeoutMs),
    statementTimeoutMs,
    queryTimeoutMs: milliseconds(
      'queryTimeoutMs',
      o.queryTimeoutMs,
      statementTimeoutMs + d.queryTimeoutSlackMs,
    ),
    // Keepalive is set in whole seconds: less than one would turn it off.
    keepAliveIdleMs: milliseconds('keepAliveIdleMs', o.keepAliveIdleMs, d.keepAliveIdleMs, 1_000),
    lockProbeIntervalMs: milliseconds(
      'lockProbeIntervalMs',
      o.lockProbeIntervalMs,
      d.lockProbeIntervalMs,
      10,
    ),
    lockProbeTimeoutMs: milliseconds(
      'lockProbeTimeoutMs',
      o.lockProbeTimeoutMs,
      d.lockProbeTimeoutMs,
      10,
    ),
  };
}

/** How long after the last answered probe was sent a lock's holder may still be untold. */
export function lockLossBoundMs(t: ConnectionTiming): number {
  return t.lockProbeIntervalMs + t.lockProbeTimeoutMs;
}

/**
 * The server-side TCP keepalive of a lock's session, in seconds: the server may declare a silent
 * client dead (and free its lock) no sooner than `idle + interval * count` after the last packet
 * it received, which is at least twice the loss bound. The probes keep the connection busier than
 * `idle`, so while the network is fine the server never even starts its keepalive probes.
 */
export function lockSessionKeepalive(t: ConnectionTiming): {
  idleS: number;
  intervalS: number;
  count: number;
} {
  const boundS = Math.ceil(lockLossBoundMs(t) / 1_000);
  return { idleS: 2 * boundS, intervalS: boundS, count: 3 };
}
