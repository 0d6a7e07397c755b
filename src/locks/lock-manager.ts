/**
 * `lh.locks`: builds lock handles of the three flavours, validating names and options once, at
 * construction. Each call returns a new, independent handle: two handles on one name contend
 * like two processes would. The manager holds no locks itself; it only shares the wake-ups of
 * lease-lock waiters among its handles.
 *
 * | flavour  | held by                          | token | frees itself when         |
 * |----------|----------------------------------|-------|---------------------------|
 * | advisory | a dedicated connection           | none  | the connection drops      |
 * | session  | an open transaction on one       | yes   | the connection drops      |
 * | lease    | a row with an expiry (renewed)   | yes   | the term expires          |
 *
 * Beside them, `semaphore(name, { permits })` builds a counting semaphore whose permits are
 * lease-like terms (semaphore.ts).
 *
 * Advisory and session locks need the connection to stay one server session for the whole
 * term: behind pgbouncer they need session pooling (docs/locks-and-elections.md).
 */
import { HeldTerms } from '../core/held-terms.js';
import type { Clock } from '../core/clock.js';
import { InvalidArgumentError, UnsupportedError } from '../core/errors.js';
import { termsLimit, termsTimeline, type LeaseTermView } from '../core/lease-terms.js';
import type { Lease } from '../core/types.js';
import { LIMITS, requireName, requireSafeInteger } from '../core/validate.js';
import type { Engine, EngineCapabilities } from '../engine/engine.js';
import { AdvisoryLock } from './advisory-lock.js';
import { LeaseLock, leaseLockSettings, type LeaseLockOptions } from './lease-lock.js';
import { Semaphore, type SemaphoreOptions } from './semaphore.js';
import { SessionLock } from './session-lock.js';
import { ELECTION_LOCK_PREFIX } from './election-options.js';
import { LockWakeups } from './wait.js';

export class LockManager {
  private readonly wakeups: LockWakeups;

  constructor(
    private readonly engine: Engine,
    private readonly clock: Clock = engine.clock,
    /** Where held lease-lock terms and permits are kept for `lh.close()` (decision 0285). */
    private readonly terms: HeldTerms = new HeldTerms(),
  ) {
    this.wakeups = new LockWakeups(engine);
  }

  /** A PostgreSQL advisory lock on a dedicated connection. No fencing token: `Lock<null>`. */
  advisory(name: string): AdvisoryLock {
    this.requireCapability('advisoryLocks', 'advisory');
    return new AdvisoryLock(this.engine, requireName('name', name), this.clock);
  }

  /** A row lock held by an open transaction on a dedicated connection, with a fencing token. */
  session(name: string): SessionLock {
    this.requireCapability('sessionLocks', 'session');
    return new SessionLock(this.engine, requireName('name', name), this.clock);
  }

  /** A table lease with auto-renew, quiet period, lockAtLeast and lock delay. */
  lease(name: string, options: LeaseLockOptions): LeaseLock {
    const checkedName = requireName('name', name);
    return new LeaseLock(
      this.engine,
      checkedName,
      leaseLockSettings(options),
      this.wakeups,
      this.clock,
      this.terms,
    );
  }

  /**
   * A counting semaphore: at most `permits` valid permits at once, each a term with an expiry
   * and a fencing token (`acquire({ ttl })`, or `hold({ ttl })` to renew it). Not a flavour of
   * `Lock`: a handle hands out any number of permits, one per successful call.
   */
  semaphore(name: string, options: SemaphoreOptions): Semaphore {
    return new Semaphore(this.engine, name, options, this.wakeups, this.clock, this.terms);
  }

  /**
   * The latest term of each lease lock (a lock's row outlives its terms), optionally of the
   * names starting with `prefix`; an election's lock is `leasehold:election:<name>`.
   */
  async listLeaseLocks(options: { prefix?: string; limit?: number } = {}): Promise<Lease[]> {
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('options', 'must be an object { prefix?, limit? }');
    const limit = requireSafeInteger('limit', options.limit ?? 100, 1);
    if (limit > LIMITS.listMaxLimit)
      throw new InvalidArgumentError('limit', `must be at most ${LIMITS.listMaxLimit}`);
    return this.engine.leaseLockList({
      ...(options.prefix === undefined ? {} : { prefix: requireName('prefix', options.prefix) }),
      limit,
    });
  }

  /**
   * The terms of the lease lock `name`, newest first, as `lh.leases.terms` answers for a lease
   * (decision 0267); an unknown name has none.
   */
  async leaseLockTerms(name: string, options?: { limit?: number }): Promise<LeaseTermView[]> {
    return this.lockTerms(requireName('name', name), termsLimit(options));
  }

  /** The terms of the election `election` (its lease lock `leasehold:election:<election>`). */
  async electionTerms(election: string, options?: { limit?: number }): Promise<LeaseTermView[]> {
    const name = requireName(
      'election',
      election,
      LIMITS.nameMaxLength - ELECTION_LOCK_PREFIX.length,
    );
    return this.lockTerms(ELECTION_LOCK_PREFIX + name, termsLimit(options));
  }

  private async lockTerms(name: string, limit: number): Promise<LeaseTermView[]> {
    // The row first: a term that ends between the two reads is then among the recorded ones,
    // and termsTimeline keeps one copy of each token.
    const current = await this.engine.leaseLockGet({ name });
    const recorded = await this.engine.leaseTermList({ kind: 'lock', resource: name, limit });
    return termsTimeline(current, recorded, limit);
  }

  private requireCapability(capability: keyof EngineCapabilities, flavour: string): void {
    if (!this.engine.capabilities[capability])
      throw new UnsupportedError(
        `${flavour} locks need a dedicated database session, which the ${this.engine.name} engine does not offer here`,
      );
  }
}
