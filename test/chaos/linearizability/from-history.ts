/**
 * A chaos history turned into operations for the linearizability checker
 * (docs/decisions/0230-linearizability-in-chaos-runs.md):
 *
 * - Lease operations (leases, and lease locks with elections and schedules), one per call at the
 *   engine seam: the `lease-invoke` record written before the call is sent, paired by call id
 *   with its answer. A grant, renewal or release answered is a known outcome on the database
 *   clock; a refusal (busy, lost) is known but without its database time; a call that threw, or
 *   that never answered (its process killed, its connection reset), is an unknown outcome.
 *   Partitioned by `family/resource`.
 * - Fenced increments as writes of a fenced register per scope: committed is accepted, refused by
 *   the fence (`stale_token`) is refused, failed before COMMIT is left out (nothing committed),
 *   no answer (COMMIT in flight, process killed) is unknown. The ledger read after the run gives
 *   each scope's last committed increment: a final read, after every write.
 * - In an asynchronous failover run, acknowledged operations answered in the window a promotion
 *   can have lost (checkers/failover-losses.ts) are marked `mayBeLost`.
 *
 * Call and return times are the wall clock of this host (every process runs on it).
 */
import type { ChildEvent, History, LeaseInvokeEvent, LeaseOpEvent } from '../history.js';
import { lossWindowOf } from '../checkers/failover-losses.js';
import type { LeaseInput, LeaseOperation, LeaseOutput } from './lease-model.js';
import type { RegisterOperation } from './fenced-register-model.js';

export interface HistoryOperations {
  /** `lh.leases` (family lease), exact refusals. */
  leases: LeaseOperation[];
  /** Lease locks (elections, schedules in lock mode): refusals may come from a closed gap. */
  locks: LeaseOperation[];
  registers: RegisterOperation[];
}

const callKey = (e: ChildEvent & { callId?: number }): string =>
  `${e.proc}#${e.incarnation}#${e.callId}`;

/**
 * How long after its call an operation without an answer may still take effect. The engine's
 * statements run under a 10 s statement_timeout on the server (connection-timing.ts); the
 * harness's faults hold a child's traffic for at most a few seconds (a blackhole: ttl + 1.8 s;
 * latency: up to 800 ms a chunk for 4 s); a killed primary runs nothing more. 30 s is three
 * times the longest of these. Without a bound every unanswered call stays a candidate to the
 * end of the run, and refuting an illegal history costs time exponential in their number.
 */
export const UNANSWERED_EFFECT_MS = 30_000;

/** The refusal code of the fence (StaleTokenError). */
const FENCE_REFUSAL = 'stale_token';

export function operationsOf(history: History): HistoryOperations {
  const mayBeLost = lossWindowOf(history);
  const answers = new Map<string, ChildEvent & LeaseOpEvent>();
  for (const e of history.events)
    if (e.type === 'lease-op' && e.callId !== undefined && !e.inFlight) answers.set(callKey(e), e);

  const leases: LeaseOperation[] = [];
  const locks: LeaseOperation[] = [];
  for (const e of history.events) {
    if (e.type !== 'lease-invoke') continue;
    const op = leaseOperation(e, answers.get(callKey(e)), mayBeLost);
    if (op) (e.family === 'lease' ? leases : locks).push(op);
  }
  return { leases, locks, registers: registerOperations(history, mayBeLost) };
}

function leaseOperation(
  invoke: ChildEvent & LeaseInvokeEvent,
  answer: (ChildEvent & LeaseOpEvent) | undefined,
  mayBeLost: (ackedAt: number) => boolean,
): LeaseOperation | null {
  const resource = `${invoke.family}/${invoke.resource}`;
  const client = invoke.holder;
  const ttl = invoke.ttlMs ?? 0;
  let input: LeaseInput;
  if (invoke.op === 'acquire') input = { kind: 'acquire', resource, holder: client, ttl };
  else if (invoke.requestedToken === undefined)
    return null; // a seed-000 call without a token
  else if (invoke.op === 'renew')
    input = { kind: 'renew', resource, holder: client, token: invoke.requestedToken, ttl };
  else input = { kind: 'release', resource, holder: client, token: invoke.requestedToken };

  const unknown = {
    client,
    call: invoke.t,
    ret: Infinity,
    input,
    unknown: true as const,
    deadline: invoke.t + UNANSWERED_EFFECT_MS,
  };
  // Refused by the server or never sent: nothing happened, nothing to check.
  if (answer?.error !== undefined && answer.noEffect) return null;
  if (!answer || answer.error !== undefined) return unknown;
  let output: LeaseOutput;
  if (!answer.ok) {
    output = invoke.op === 'acquire' ? { kind: 'busy' } : { kind: 'lost' };
  } else {
    if (answer.dbAt === undefined || answer.token === undefined) return unknown;
    const dbNow = answer.dbAt;
    const expiresAt = answer.dbExpiresAt ?? dbNow;
    output =
      invoke.op === 'acquire'
        ? { kind: 'acquired', token: answer.token, expiresAt, dbNow }
        : invoke.op === 'renew'
          ? { kind: 'renewed', expiresAt, dbNow }
          : { kind: 'released', dbNow };
    if (mayBeLost(answer.t)) input = { ...input, mayBeLost: true } as LeaseInput;
  }
  return { client, call: invoke.t, ret: answer.t, input, output };
}

function registerOperations(
  history: History,
  mayBeLost: (ackedAt: number) => boolean,
): RegisterOperation[] {
  const invokes = new Map<string, ChildEvent>();
  const outcomes = new Map<string, ChildEvent & { phase: string; error?: string }>();
  let end = 0;
  for (const e of history.events) {
    end = Math.max(end, e.t);
    if (e.type !== 'increment') continue;
    if (e.phase === 'invoke') invokes.set(e.opId, e);
    else outcomes.set(e.opId, e);
  }
  const ops: RegisterOperation[] = [];
  for (const [opId, invoke] of invokes) {
    if (invoke.type !== 'increment') continue;
    const write = { kind: 'write' as const, key: invoke.scope, token: invoke.token, value: opId };
    const outcome = outcomes.get(opId);
    const base = { client: invoke.proc, call: invoke.t };
    if (!outcome)
      ops.push({
        ...base,
        ret: Infinity,
        input: write,
        unknown: true,
        deadline: invoke.t + UNANSWERED_EFFECT_MS,
      });
    else if (outcome.phase === 'ok')
      ops.push({
        ...base,
        ret: outcome.t,
        input: mayBeLost(outcome.t) ? { ...write, mayBeLost: true } : write,
        output: { kind: 'accepted' },
      });
    else if (outcome.error === FENCE_REFUSAL)
      ops.push({ ...base, ret: outcome.t, input: write, output: { kind: 'refused' } });
    // Any other failure came before COMMIT was sent: nothing took effect, nothing to check.
  }
  // The ledger, read after every child stopped, ends each scope with its last committed write.
  const last = new Map<string, { seq: number; opId: string }>();
  for (const row of history.facts.ledger) {
    const seen = last.get(row.scope);
    if (!seen || row.seq > seen.seq) last.set(row.scope, { seq: row.seq, opId: row.opId });
  }
  for (const [scope, { opId }] of last)
    ops.push({
      client: 'ledger',
      call: end + 1,
      ret: end + 2,
      input: { kind: 'read', key: scope },
      output: { kind: 'value', value: opId },
    });
  return ops;
}
