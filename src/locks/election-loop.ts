/**
 * The parts of an election that are plumbing rather than policy: the candidate's polling loop
 * (the shared BackgroundService skeleton around `Election.runOnce()`), the lease-lock family
 * seen as a HeldLease's term store, and a race between a statement and the election's close.
 */
import type { LeaseTermStore } from '../core/held-lease.js';
import type { Engine } from '../engine/engine.js';
import { BackgroundService, type ServiceOptions } from '../runtime/service.js';

/** What the loop drives: `Election` (kept structural so this module needs no import of it). */
export interface CandidateDriver<Attempt> {
  readonly name: string;
  runOnce(): Promise<Attempt>;
  nextDelay(result: Attempt | undefined, failed: boolean): number;
  report(error: unknown): void;
}

/** The candidate's polling loop. */
export class ElectionLoop<Attempt> extends BackgroundService<Attempt> {
  constructor(
    private readonly driver: CandidateDriver<Attempt>,
    options: ServiceOptions,
  ) {
    super(`election:${driver.name}`, options);
  }

  runOnce(): Promise<Attempt> {
    return this.driver.runOnce();
  }

  protected override nextDelay(result: Attempt | undefined, failed: boolean): number {
    return this.driver.nextDelay(result, failed);
  }

  protected override onError(error: unknown): void {
    this.driver.report(error);
  }
}

/** The lease-lock family seen as the term store a HeldLease renews and releases through. */
export function leaseLockTermStore(engine: Engine): LeaseTermStore {
  return {
    leaseRenew: ({ resource, holder, token, ttlMs }) =>
      engine.leaseLockRenew({ name: resource, holder, token, ttlMs }),
    leaseRelease: ({ resource, holder, token }) =>
      engine.leaseLockRelease({ name: resource, holder, token }),
  };
}

export const CLOSED = Symbol('closed');

/** Resolves with the promise's value, or CLOSED as soon as `signal` aborts. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | typeof CLOSED> {
  if (signal.aborted) return Promise.resolve(CLOSED);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(CLOSED);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
