/**
 * The engine as the child's library sees it, with every operation that decides ownership
 * (acquire, renew, release of leases and lease locks) recorded: invocation time, outcome, token
 * and the database times the statement answered. Recording at the engine seam captures what the
 * database decided even when the library chooses not to believe it (a renewal that came back
 * after the trust deadline), which is what the checkers need.
 */
import type { Engine } from '../../../src/engine/engine.js';
import type { Job, Lease } from '../../../src/core/types.js';
import type {
  JobClaimParams,
  JobLeaseRef,
  JobRenewed,
  JobRenewParams,
} from '../../../src/engine/jobs.js';
import type { LeaseOpEvent } from '../history.js';
import { wallNow } from '../wall-clock.js';
import type { Emit } from './emit.js';

type Recorded = Pick<LeaseOpEvent, 'family' | 'op'>;

const RECORDED: Record<string, Recorded> = {
  leaseAcquire: { family: 'lease', op: 'acquire' },
  leaseRenew: { family: 'lease', op: 'renew' },
  leaseRelease: { family: 'lease', op: 'release' },
  leaseLockAcquire: { family: 'lock', op: 'acquire' },
  leaseLockRenew: { family: 'lock', op: 'renew' },
  leaseLockRelease: { family: 'lock', op: 'release' },
};

/** The many-lease calls the HTTP service's coalescer sends (decision 0404): one record per element. */
const RECORDED_MANY: Record<string, Recorded> = {
  leaseAcquireMany: { family: 'lease', op: 'acquire' },
  leaseRenewMany: { family: 'lease', op: 'renew' },
  leaseReleaseMany: { family: 'lease', op: 'release' },
};

interface OpParams {
  resource?: string;
  name?: string;
  holder: string;
  token?: number;
  ttlMs?: number;
}

// Numbers each call of this process, to pair its invoke record with its answer.
let calls = 0;

/** The record written before a call is sent: what the call asked for. */
function invoke(recorded: Recorded, params: OpParams, emit: Emit): number {
  const callId = ++calls;
  emit({
    type: 'lease-invoke',
    ...recorded,
    resource: params.resource ?? params.name ?? '?',
    holder: params.holder,
    callId,
    ...(recorded.op !== 'acquire' && typeof params.token === 'number'
      ? { requestedToken: params.token }
      : {}),
    ...(recorded.op !== 'release' && typeof params.ttlMs === 'number'
      ? { ttlMs: params.ttlMs }
      : {}),
  });
  return callId;
}

/** The error's code, and whether the engine knows the statement took no effect. */
function errorFields(error: unknown): { error: string; noEffect?: true } {
  const err = error as { code?: unknown; details?: Record<string, unknown> } | null;
  const code = typeof err?.code === 'string' ? err.code : 'error';
  // The engine marks an unavailable error whose statement may have committed (pg-errors.ts);
  // any other unavailable error was refused by the server or never sent. A server's refusal
  // (internal, with its SQLSTATE) and bad input were rolled back or never sent too.
  const noEffect =
    (code === 'unavailable' && err?.details?.['outcome'] !== 'unknown') ||
    (code === 'internal' && typeof err?.details?.['sqlstate'] === 'string') ||
    code === 'invalid_argument';
  return noEffect ? { error: code, noEffect: true } : { error: code };
}

function leaseOf(answer: unknown): Lease | null {
  if (answer && typeof answer === 'object' && 'acquired' in answer) {
    const result = answer as { acquired: boolean; lease?: Lease };
    return result.acquired ? (result.lease ?? null) : null;
  }
  return (answer as Lease | null) ?? null;
}

function decidedAt(op: LeaseOpEvent['op'], lease: Lease): Date {
  if (op === 'release') return lease.releasedAt ?? lease.expiresAt;
  if (op === 'renew') return lease.renewedAt ?? lease.acquiredAt;
  // An acquire that extended the holder's own live term answers with its renewedAt.
  return lease.renewedAt && lease.renewedAt > lease.acquiredAt ? lease.renewedAt : lease.acquiredAt;
}

/** The event for an answered call: the term it got (token and database times), or a refusal. */
function answered<B extends object>(
  base: B,
  op: LeaseOpEvent['op'],
  holder: string,
  answer: unknown,
) {
  const lease = leaseOf(answer);
  if (!lease || lease.holder !== holder) return { ...base, ok: false as const };
  return {
    ...base,
    ok: true as const,
    token: lease.token,
    dbAt: decidedAt(op, lease).getTime(),
    ...(op === 'acquire' ? { dbAcquiredAt: lease.acquiredAt.getTime() } : {}),
    dbExpiresAt: lease.expiresAt.getTime(),
  };
}

/** Job operations that end a run: the outcome's name in the history. */
const JOB_OUTCOMES: Record<string, 'complete' | 'fail' | 'hand-back'> = {
  jobComplete: 'complete',
  jobFail: 'fail',
  jobHandBack: 'hand-back',
};

/**
 * The job operations the limit-exceeded checker needs: each claimed run with its database
 * claimedAt and lease expiry, each granted renewal's new expiry, and each outcome as it is sent
 * (the run cannot have ended before). Undefined for any other operation.
 */
function recordJobs(
  property: string,
  call: (p: unknown) => Promise<unknown>,
  emit: Emit,
): ((p: unknown) => Promise<unknown>) | undefined {
  if (property === 'jobClaimBatch')
    return async (params) => {
      const jobs = (await call(params)) as Job[];
      const worker = (params as JobClaimParams).workerId;
      for (const job of jobs)
        if (job.claimedAt && job.leaseExpiresAt)
          emit({
            type: 'job-claim',
            queue: job.queue,
            jobId: job.id,
            generation: job.generation,
            worker,
            partitionKey: job.partitionKey,
            dbClaimedAt: job.claimedAt.getTime(),
            dbLeaseExpiresAt: job.leaseExpiresAt.getTime(),
          });
      return jobs;
    };
  if (property === 'jobRenewLeases')
    return async (params) => {
      const renewed = (await call(params)) as JobRenewed[];
      const generation = new Map((params as JobRenewParams).jobs.map((j) => [j.id, j.generation]));
      for (const r of renewed) {
        const g = generation.get(r.id);
        if (g !== undefined)
          emit({
            type: 'job-renew',
            jobId: r.id,
            generation: g,
            dbLeaseExpiresAt: r.leaseExpiresAt.getTime(),
          });
      }
      return renewed;
    };
  const op = JOB_OUTCOMES[property];
  if (op)
    return (params) => {
      // Written (synchronously) before the statement is sent.
      for (const j of (params as { jobs: readonly JobLeaseRef[] }).jobs)
        emit({ type: 'job-outcome-invoke', op, jobId: j.id, generation: j.generation });
      return call(params);
    };
  return undefined;
}

export function recordingEngine<E extends Engine>(engine: E, emit: Emit): E {
  return new Proxy(engine, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const jobs =
        typeof property === 'string'
          ? recordJobs(property, (value as (p: unknown) => Promise<unknown>).bind(target), emit)
          : undefined;
      if (jobs) return jobs;
      const many = typeof property === 'string' ? RECORDED_MANY[property] : undefined;
      if (many)
        return recordMany(many, value as (p: OpParams[]) => Promise<unknown[]>, target, emit);
      const recorded = typeof property === 'string' ? RECORDED[property] : undefined;
      if (!recorded) return (value as (...args: unknown[]) => unknown).bind(target);
      return async (params: OpParams) => {
        const invokedAt = wallNow();
        const callId = invoke(recorded, params, emit);
        const base = {
          type: 'lease-op' as const,
          ...recorded,
          resource: params.resource ?? params.name ?? '?',
          holder: params.holder,
          invokedAt,
          callId,
        };
        const requested = params.token;
        if (recorded.op === 'release' && typeof requested === 'number')
          // Written (synchronously, stdout is a pipe) before the statement is sent.
          emit({ ...base, ok: false, inFlight: true, requestedToken: requested });
        let answer: unknown;
        try {
          answer = await (value as (p: OpParams) => Promise<unknown>).call(target, params);
        } catch (error) {
          // A release that failed in flight may still have committed: the checkers must know
          // which term it tried to end (terms.ts, earliestEnd).
          emit({
            ...base,
            ok: false,
            ...errorFields(error),
            ...(recorded.op === 'release' && typeof requested === 'number'
              ? { requestedToken: requested }
              : {}),
          });
          throw error;
        }
        emit(answered(base, recorded.op, params.holder, answer));
        return answer;
      };
    },
  });
}

/** A many-lease call recorded as its single calls would be, one event per element. */
function recordMany(
  recorded: Recorded,
  call: (params: OpParams[]) => Promise<unknown[]>,
  target: Engine,
  emit: Emit,
) {
  return async (list: OpParams[]): Promise<unknown[]> => {
    const invokedAt = wallNow();
    const bases = list.map((params) => ({
      type: 'lease-op' as const,
      ...recorded,
      resource: params.resource ?? '?',
      holder: params.holder,
      invokedAt,
      callId: invoke(recorded, params, emit),
    }));
    const requested = list.map((params) => params.token);
    if (recorded.op === 'release')
      bases.forEach((base, i) => {
        if (typeof requested[i] === 'number')
          emit({ ...base, ok: false, inFlight: true, requestedToken: requested[i] });
      });
    let answers: unknown[];
    try {
      answers = await call.call(target, list);
    } catch (error) {
      bases.forEach((base, i) =>
        emit({
          ...base,
          ok: false,
          ...errorFields(error),
          ...(recorded.op === 'release' && typeof requested[i] === 'number'
            ? { requestedToken: requested[i] }
            : {}),
        }),
      );
      throw error;
    }
    answers.forEach((answer, i) => emit(answered(bases[i]!, recorded.op, list[i]!.holder, answer)));
    return answers;
  };
}
