/**
 * The semaphore family of the engine seam: counting semaphores whose permits are terms with an
 * expiry, like lease locks, on a fixed set of slots per name (decision 0240).
 *
 * A semaphore named `name` has slots 0, 1, 2, …; a permit is a term on one slot. An acquire
 * with `permits: P` may take only a slot below P, and only one that is free at the engine's
 * `now`: never taken, released, or expired (`expiresAt <= now`). So an acquire is granted only
 * while fewer than P valid permits sit in slots 0..P-1, and with every caller passing the same
 * P there are never more than P valid permits. Callers that lower P leave the permits of the
 * higher slots to end (release or expiry): they are not revoked, and no new one is granted there
 * by the callers with the lower P.
 *
 * Every granted permit gets a fencing token above every earlier permit's token of the same name
 * (whatever the slot), drawn with the epoch discipline of lease terms and committed durably
 * before it is returned. Every acquire starts a new permit: a holder may hold several, and an
 * acquire retried after its answer was lost leaves the first permit to expire. A release
 * notifies topic `locks` with `semaphore:<name>`, inline in the releasing statement, so waiters
 * wake at once.
 */
import type { FencingToken, SemaphorePermit } from '../core/types.js';

/** What a release of `name` announces on the `locks` topic (semaphoreWakeKey in one place). */
export function semaphoreWakeKey(name: string): string {
  return `semaphore:${name}`;
}

export interface SemaphoreAcquireParams {
  name: string;
  holder: string;
  /** How many permits the semaphore grants: the slots this acquire may take are 0..permits-1. */
  permits: number;
  ttlMs: number;
}

export type SemaphoreAcquireResult =
  | { readonly acquired: true; readonly permit: SemaphorePermit }
  | {
      readonly acquired: false;
      /** Engine time until the first valid permit in slots 0..permits-1 expires unless renewed. */
      readonly retryAfterMs: number;
    };

export interface SemaphoreRenewParams {
  name: string;
  slot: number;
  holder: string;
  token: FencingToken;
  ttlMs: number;
}

export interface SemaphoreReleaseParams {
  name: string;
  slot: number;
  holder: string;
  token: FencingToken;
}

export interface SemaphoreOperations {
  /** Takes the lowest free slot below `permits`, with a new token; not acquired when none is. */
  semaphoreAcquire(params: SemaphoreAcquireParams): Promise<SemaphoreAcquireResult>;
  /** Extends a valid permit held by `holder` with `token`; null when it is no longer theirs. */
  semaphoreRenew(params: SemaphoreRenewParams): Promise<SemaphorePermit | null>;
  /** Ends a valid permit at once, freeing its slot; null when it was no longer theirs. */
  semaphoreRelease(params: SemaphoreReleaseParams): Promise<SemaphorePermit | null>;
  /** The valid permits of `name` right now, in slot order (every slot, whatever the permits). */
  semaphoreList(params: { name: string }): Promise<SemaphorePermit[]>;
}
