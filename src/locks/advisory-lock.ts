/**
 * The advisory flavour: `pg_advisory_lock` on a dedicated connection (emulated in process by the
 * memory engine). The lock lives exactly as long as that connection: when it drops, PostgreSQL
 * frees the lock and the term's signal fires with a LeaseLostError. A blocking `lock()` waits in
 * the server's lock queue, costing one idle connection and no polling.
 *
 * It hands out no fencing token (`Lock<null>`): advisory locks carry none, so a holder that was
 * paused past a dropped connection cannot be told apart from the next one downstream. Use the
 * session or lease flavour when writes elsewhere must reject superseded holders.
 */
import type { Clock } from '../core/clock.js';
import type { ConnectionLock } from '../engine/locks.js';
import type { Engine } from '../engine/engine.js';
import { TermLock, type Lock, type LockTerm } from './lock.js';

export class AdvisoryLock extends TermLock<null> implements Lock<null> {
  private connection: ConnectionLock | undefined;

  constructor(
    private readonly engine: Engine,
    name: string,
    clock: Clock = engine.clock,
  ) {
    super('advisory', name, clock);
  }

  /** The PostgreSQL backend holding the current term (null in memory or when not held). */
  get backendPid(): number | null {
    return this.isHeld() ? (this.connection?.backendPid ?? null) : null;
  }

  /** True when the lock was free and is now this handle's; false when someone else holds it. */
  async tryLock(): Promise<boolean> {
    return (await this.tryTerm()) !== null;
  }

  protected async acquireTerm(signal: AbortSignal): Promise<LockTerm<null>> {
    return this.toTerm(await this.engine.advisoryLock({ name: this.name, signal }));
  }

  protected async tryAcquireTerm(): Promise<LockTerm<null> | null> {
    const held = await this.engine.advisoryTryLock({ name: this.name });
    return held ? this.toTerm(held) : null;
  }

  private toTerm(held: ConnectionLock): LockTerm<null> {
    this.connection = held;
    return { token: null, signal: held.signal, release: () => held.release() };
  }
}
