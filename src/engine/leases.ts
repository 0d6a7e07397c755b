/**
 * The lease family of the engine seam: named resources held for a time by one holder, each
 * new term with a fencing token greater than every earlier one. What HeldLease, LeaseManager
 * and the HTTP lease routes are built on; the rules are in the comments of LeaseOperations and
 * the conformance suite checks each.
 */
import type { RecordedTerm, TermKind } from '../core/lease-terms.js';
import type { FencingToken, Lease, LeaseListFilter } from '../core/types.js';

export interface LeaseAcquireParams {
  resource: string;
  holder: string;
  ttlMs: number;
  metadata?: Record<string, unknown> | null;
}

export type LeaseAcquireResult =
  | { readonly acquired: true; readonly lease: Lease }
  /** `current` is the live lease that blocked us (null only if it vanished in between). */
  | { readonly acquired: false; readonly current: Lease | null };

export interface LeaseRenewParams {
  resource: string;
  holder: string;
  /** Omitted only by callers of the seed-000 HTTP API that never saw a token; the library always sends it. */
  token?: FencingToken;
  ttlMs: number;
}

export interface LeaseReleaseParams {
  resource: string;
  holder: string;
  token?: FencingToken;
}

export interface LeaseReleaseByIdParams {
  id: number;
  /** Omit to release whoever holds it (an administrator's action). */
  holder?: string;
  token?: FencingToken;
}

export interface LeaseListParams {
  filter: LeaseListFilter;
  limit: number;
  offset: number;
  /** Only leases whose resource starts with this prefix. */
  resourcePrefix?: string;
}

export interface LeaseTermListParams {
  /** `lease` for lh.leases rows, `lock` for lease locks (elections among them). */
  kind: TermKind;
  resource: string;
  limit: number;
}

export interface LeaseTermPruneParams {
  /** Recorded terms that ended longer ago than this are deleted. */
  olderThanMs: number;
  /** And, per resource, all but the newest this many recorded terms. */
  keepPerResource: number;
  /** Rows per statement. */
  limit: number;
}

export interface LeaseOperations {
  /**
   * Takes the lease if it is free, expired or released, bumping its token; extends it (same
   * token) if `holder` already holds it live, so a retried request cannot lock out its sender.
   */
  leaseAcquire(params: LeaseAcquireParams): Promise<LeaseAcquireResult>;
  /** Extends a live lease held by `holder` with `token`; null when it is no longer theirs. */
  leaseRenew(params: LeaseRenewParams): Promise<Lease | null>;
  /** Ends a live lease held by `holder` with `token`; null when it was no longer theirs. */
  leaseRelease(params: LeaseReleaseParams): Promise<Lease | null>;
  leaseReleaseById(params: LeaseReleaseByIdParams): Promise<Lease | null>;
  /**
   * The three calls above for many leases at once (the service coalesces concurrent requests
   * into these): results in input order, each exactly what its single call would have answered
   * had the calls run one after another in that order. A resource may appear more than once;
   * an empty list answers an empty list. Not atomic as a whole: each item commits or fails on
   * its own terms, and a failure of the statement itself rejects the whole call.
   */
  leaseAcquireMany(params: readonly LeaseAcquireParams[]): Promise<LeaseAcquireResult[]>;
  leaseRenewMany(params: readonly LeaseRenewParams[]): Promise<(Lease | null)[]>;
  leaseReleaseMany(params: readonly LeaseReleaseParams[]): Promise<(Lease | null)[]>;
  leaseGet(params: { resource: string }): Promise<Lease | null>;
  leaseGetById(params: { id: number }): Promise<Lease | null>;
  leaseList(params: LeaseListParams): Promise<Lease[]>;
  /** How many leases are live right now (held, not released, not expired): counted, not listed. */
  leaseCountActive(): Promise<number>;
  /**
   * The recorded terms of a resource (or lease lock), newest first: every term that a later
   * acquire replaced, with how it ended (decision 0267). The term on the row itself is not
   * among them: read it with leaseGet / leaseLockGet. A renew (lease or lease lock) refused
   * because another holder's term followed its own expired one marks that term `superseded`.
   */
  leaseTermList(params: LeaseTermListParams): Promise<RecordedTerm[]>;
  /** One bounded step of the maintainer's pruning of recorded terms; answers the rows deleted. */
  leaseTermPrune(params: LeaseTermPruneParams): Promise<number>;
  /**
   * Whether lease terms are being recorded (off until turned on: it costs the acquire; lease
   * locks always record). A setting of the storage, shared by every instance on it.
   */
  leaseTermRecording(): Promise<boolean>;
  leaseTermRecordingSet(params: { enabled: boolean }): Promise<void>;
}
