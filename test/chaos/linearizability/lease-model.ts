/**
 * The sequential model of one lease per resource, on the database clock: each operation's
 * database time (`dbNow`, in its output when known) decides expiry, never the wall clock.
 *
 * - acquire(holder, ttl): free or expired -> a token above every token handed out so far;
 *   held and live by the same holder -> the same token again (the idempotent re-acquire);
 *   held and live by another -> busy.
 * - renew(holder, token, ttl): ok iff that holder holds that token and it is live; else lost.
 * - release(holder, token): ok iff that holder holds that token and it is live (the lease is
 *   then free); else lost.
 * - read: the live holder and token, or none.
 * The database clock never goes backwards along the linearization.
 *
 * A refusal (busy, lost) may come without its database time (the chaos recording has none yet):
 * it is then judged both ways, live or expired.
 *
 * An operation whose outcome is unknown has no database time: what it did is left open (a token
 * known only to be above the previous ones, an expiry not known), and later operations may
 * resolve it either way.
 */
import { partitionBy } from './partition.js';
import type { Model, Operation, StepResult } from './search.js';

/**
 * `mayBeLost`: an acknowledged operation that an asynchronous failover may have undone (it was
 * answered in the window before a promotion that the standby can have missed). It may have taken
 * effect as answered, or been forgotten by the database; a forgotten grant's token still counts
 * as handed out (its holder may use it), so a later token must still be above it.
 */
export type LeaseInput =
  | { kind: 'acquire'; resource: string; holder: string; ttl: number; mayBeLost?: true }
  | {
      kind: 'renew';
      resource: string;
      holder: string;
      token: number;
      ttl: number;
      mayBeLost?: true;
    }
  | { kind: 'release'; resource: string; holder: string; token: number; mayBeLost?: true }
  | { kind: 'read'; resource: string };

export type LeaseOutput =
  | { kind: 'acquired'; token: number; expiresAt: number; dbNow: number }
  | { kind: 'busy'; dbNow?: number }
  | { kind: 'renewed'; expiresAt: number; dbNow: number }
  | { kind: 'released'; dbNow: number }
  | { kind: 'lost'; dbNow?: number }
  | { kind: 'held'; holder: string; token: number; dbNow: number }
  | { kind: 'none'; dbNow: number };

export interface LeaseState {
  holder: string | null;
  /** The holder's token; null when only known to be above `maxToken` (an unknown acquire). */
  token: number | null;
  /** null when not known (an unknown acquire or renew took effect at an unknown time). */
  expiresAt: number | null;
  /** The highest token known to have been handed out; a new token must be above it. */
  maxToken: number;
  /** The latest database time seen along the linearization (only with `monotonicClock`). */
  now: number;
}

export type LeaseOperation = Operation<LeaseInput, LeaseOutput>;

export interface LeaseModelOptions {
  /**
   * Require database times not to go backwards along the linearization. Off by default:
   * PostgreSQL's now() is the transaction's start, and transactions commit in another order.
   */
  monotonicClock?: boolean;
  /** A broken variant for tests: renew accepted without checking expiry. */
  renewWithoutExpiryCheck?: boolean;
  /** A broken variant for tests: a new token need only be at least the highest so far. */
  tokensMayRepeat?: boolean;
  /**
   * An acquire may be refused whatever the state: lease locks keep a term's resource closed
   * after its release (`atLeastMs`) and for a quiet gap (`quietMs`), which the recorded answers
   * do not carry. A grant is still judged in full.
   */
  refusalsAnytime?: boolean;
}

const ok = (state: LeaseState): StepResult<LeaseState> => ({ ok: true, state });
const bad = (state: LeaseState): StepResult<LeaseState> => ({ ok: false, state });
const free = (s: LeaseState): LeaseState => ({ ...s, holder: null, token: null, expiresAt: null });

/** The possible answers to "is the lease live at database time t?" (t undefined: unknown). */
function liveness(s: LeaseState, t: number | undefined): boolean[] {
  if (s.holder === null) return [false];
  if (s.expiresAt === null || t === undefined) return [true, false];
  return [t < s.expiresAt];
}

/** The holder's state if `token` can be its token (resolving a token known only by a bound). */
function withToken(s: LeaseState, token: number): LeaseState | null {
  if (s.token !== null) return s.token === token ? s : null;
  if (token <= s.maxToken) return null;
  return { ...s, token, maxToken: token };
}

/**
 * The state after an acknowledged operation the database then forgot (an asynchronous
 * failover): unchanged, except that a grant's token counts as handed out. Null when the answer
 * was not a success (a refusal is not undone by anything).
 */
function forgotten(
  s: LeaseState,
  input: LeaseInput,
  output: LeaseOutput,
): StepResult<LeaseState> | null {
  if (output.kind === 'renewed' || output.kind === 'released') return ok(s);
  if (input.kind !== 'acquire' || output.kind !== 'acquired') return null;
  const again = s.holder === input.holder && s.token === output.token;
  if (!again && output.token <= s.maxToken) return bad(s);
  return ok({ ...s, maxToken: Math.max(s.maxToken, output.token) });
}

export function leaseModel(
  options: LeaseModelOptions = {},
): Model<LeaseState, LeaseInput, LeaseOutput> {
  const above = (token: number, max: number): boolean =>
    options.tokensMayRepeat ? token >= max : token > max;

  // One branch: the lease is (live) or is not live at the operation's database time.
  const branch = (
    s: LeaseState,
    live: boolean,
    input: LeaseInput,
    output: LeaseOutput | undefined,
  ): StepResult<LeaseState> | null => {
    // Known not live: an expired holder is gone (its token still counts in maxToken, except a
    // token never seen, which was only known to be above it).
    const gone = live ? s : free(s);
    const mine = (holder: string, token: number): LeaseState | null =>
      live && s.holder === holder ? withToken(s, token) : null;
    switch (input.kind) {
      case 'acquire': {
        if (output === undefined) {
          if (!live) return ok({ ...gone, holder: input.holder, token: null, expiresAt: null });
          return s.holder === input.holder ? ok({ ...s, expiresAt: null }) : null;
        }
        if (output.kind === 'busy')
          return options.refusalsAnytime || (live && s.holder !== input.holder) ? ok(s) : bad(s);
        if (output.kind !== 'acquired') return bad(s);
        if (live) {
          const again = s.holder === input.holder ? withToken(s, output.token) : null;
          return again ? ok({ ...again, expiresAt: output.expiresAt }) : bad(s);
        }
        if (!above(output.token, gone.maxToken)) return bad(s);
        const next = { holder: input.holder, token: output.token, expiresAt: output.expiresAt };
        return ok({ ...gone, ...next, maxToken: output.token });
      }
      case 'renew': {
        const held = options.renewWithoutExpiryCheck
          ? s.holder === input.holder
            ? withToken(s, input.token)
            : null
          : mine(input.holder, input.token);
        if (output === undefined) return held ? ok({ ...held, expiresAt: null }) : null;
        if (output.kind === 'renewed')
          return held ? ok({ ...held, expiresAt: output.expiresAt }) : bad(s);
        if (output.kind === 'lost') return held ? bad(s) : ok(gone);
        return bad(s);
      }
      case 'release': {
        const held = mine(input.holder, input.token);
        if (output === undefined) return held ? ok(free(held)) : null;
        if (output.kind === 'released') return held ? ok(free(held)) : bad(s);
        if (output.kind === 'lost') return held ? bad(s) : ok(gone);
        return bad(s);
      }
      case 'read': {
        if (output === undefined) return null;
        if (output.kind === 'none') return live ? bad(s) : ok(gone);
        if (output.kind !== 'held') return bad(s);
        const held = mine(output.holder, output.token);
        return held ? ok(held) : bad(s);
      }
    }
  };

  const step = (
    s0: LeaseState,
    input: LeaseInput,
    output: LeaseOutput | undefined,
  ): StepResult<LeaseState>[] => {
    const t = output?.dbNow;
    let s = s0;
    if (options.monotonicClock && t !== undefined) {
      if (t < s0.now) return [bad(s0)];
      s = { ...s0, now: t };
    }
    const results: StepResult<LeaseState>[] = [];
    for (const live of liveness(s, t)) {
      const r = branch(s, live, input, output);
      if (r) results.push(r);
    }
    if (input.kind !== 'read' && input.mayBeLost && output) {
      const lost = forgotten(s0, input, output);
      if (lost) results.push(lost);
    }
    // An unknown outcome that cannot have taken effect: the search leaves it out.
    return results.length > 0 ? results : [bad(s0)];
  };

  return {
    init: () => ({ holder: null, token: null, expiresAt: null, maxToken: 0, now: -Infinity }),
    step,
    partition: (ops: readonly LeaseOperation[]) => partitionBy(ops, (i) => i.resource),
    hash: (s) => `${s.holder}|${s.token}|${s.expiresAt}|${s.maxToken}|${s.now}`,
    equal: (a, b) =>
      a.holder === b.holder &&
      a.token === b.token &&
      a.expiresAt === b.expiresAt &&
      a.maxToken === b.maxToken &&
      a.now === b.now,
    describe: (input, output) => {
      const i =
        input.kind === 'acquire'
          ? `acquire(${input.holder}, ttl ${input.ttl})`
          : input.kind === 'renew'
            ? `renew(${input.holder}, token ${input.token})`
            : input.kind === 'release'
              ? `release(${input.holder}, token ${input.token})`
              : 'read()';
      const o = output === undefined ? 'unknown' : JSON.stringify(output);
      return `${input.resource}: ${i} -> ${o}`;
    },
  };
}
