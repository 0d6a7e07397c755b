/**
 * The session flavour: a row lock taken by `SELECT … FOR UPDATE` inside a transaction that stays
 * open on a dedicated connection for the whole term (emulated in process by the memory engine).
 * It does not depend on any clock: the lock lasts until the holder unlocks or its connection
 * drops, and then the term's signal fires with a LeaseLostError.
 *
 * The fencing token is taken from a sequence once the row lock is held, by a statement that
 * commits on its own before the holder sees the token. A sequence value is never rolled back,
 * so when a holder's connection drops (rolling its transaction back), the next holder still
 * gets a higher token: two holders can never share one. A token taken by an UPDATE inside the
 * holding transaction would be rolled back with it and handed out again; a `nextval` inside it
 * would not be flushed (only a commit flushes WAL) and could come back after a crash.
 */
import type { Clock } from '../core/clock.js';
import type { FencingToken } from '../core/types.js';
import type { Engine } from '../engine/engine.js';
import type { SessionLock as EngineSessionLock } from '../engine/locks.js';
import { TermLock, type Lock, type LockTerm } from './lock.js';

export class SessionLock extends TermLock<FencingToken> implements Lock<FencingToken> {
  private connection: EngineSessionLock | undefined;

  constructor(
    private readonly engine: Engine,
    name: string,
    clock: Clock = engine.clock,
  ) {
    super('session', name, clock);
  }

  /** The PostgreSQL backend holding the current term (null in memory or when not held). */
  get backendPid(): number | null {
    return this.isHeld() ? (this.connection?.backendPid ?? null) : null;
  }

  /** The token of the new term, or null when someone else holds the lock. */
  async tryLock(): Promise<FencingToken | null> {
    return (await this.tryTerm())?.token ?? null;
  }

  protected async acquireTerm(signal: AbortSignal): Promise<LockTerm<FencingToken>> {
    return this.toTerm(await this.engine.sessionLockAcquire({ name: this.name, signal }));
  }

  protected async tryAcquireTerm(): Promise<LockTerm<FencingToken> | null> {
    const held = await this.engine.sessionLockTryAcquire({ name: this.name });
    return held ? this.toTerm(held) : null;
  }

  private toTerm(held: EngineSessionLock): LockTerm<FencingToken> {
    this.connection = held;
    return held;
  }
}
