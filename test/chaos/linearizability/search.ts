/**
 * A linearizability checker (the approach of Porcupine and Knossos, after Wing & Gong and Lowe):
 * search for a sequential order of the operations that respects their real-time intervals and
 * that a sequential model accepts. Pure TypeScript, no database, no dependency.
 *
 * An operation whose outcome is unknown (a timeout, a lost answer) may or may not have taken
 * effect at any point after its call: it never returns for ordering purposes (its return is
 * +infinity), the search may linearize it anywhere after its call or leave it out (not taking
 * effect), and the model steps it with `output` undefined.
 */

export interface Operation<I, O> {
  /** Position in the history, filled in by `checkOperations` when absent; used in reports. */
  id?: number;
  client: string;
  /** Call and return times on one clock. */
  call: number;
  /** Ignored (treated as +infinity) when `unknown` is true. */
  ret: number;
  input: I;
  /** Undefined when the outcome is unknown. */
  output?: O;
  unknown?: boolean;
  /**
   * For an operation whose outcome is unknown: the time after which it can no longer take
   * effect (a statement that has not run by then never will). Without it, it may take effect at
   * any time after its call. A bound keeps the search from carrying every unanswered call
   * forever, which makes refuting an illegal history exponential in their number.
   */
  deadline?: number;
}

export interface StepResult<S> {
  ok: boolean;
  state: S;
}

export interface Model<S, I, O> {
  init(): S;
  /**
   * One operation applied to a state. `output` is undefined for an operation whose outcome is
   * unknown: the model answers with the states it may have led to if it took effect (the search
   * itself covers "it did not take effect"). A model may return several results when the
   * operation is nondeterministic (an expiry whose database time is unknown, say).
   */
  step(state: S, input: I, output: O | undefined): StepResult<S> | readonly StepResult<S>[];
  /** Split a history into parts checked alone (one per resource). */
  partition?(ops: readonly Operation<I, O>[]): Operation<I, O>[][];
  hash(state: S): string;
  equal(a: S, b: S): boolean;
  describe?(input: I, output: O | undefined): string;
}

export interface Budget {
  /** Search steps (calls tried) per partition; default 2,000,000. */
  maxSteps?: number;
  /** Milliseconds per partition; default 10,000. */
  maxMillis?: number;
}

export interface PlacedOperation {
  id: number;
  client: string;
  call: number;
  /** null when the outcome is unknown. */
  ret: number | null;
  text: string;
}

export interface FailureWindow {
  /** The longest order found that the model accepts, operations in linearization order. */
  longestPrefix: PlacedOperation[];
  /** The operation that had to be linearized by its return and could not be. */
  blocking: PlacedOperation;
  /** The operations pending (called, not linearized) at that point, none of which could go next. */
  pending: PlacedOperation[];
  /** From the earliest call among blocking and pending to the blocking operation's return. */
  from: number;
  to: number;
}

export type PartitionResult =
  | { verdict: 'ok'; operations: number; steps: number; millis: number }
  | {
      verdict: 'illegal';
      operations: number;
      steps: number;
      millis: number;
      failure: FailureWindow;
    }
  | { verdict: 'unknown'; operations: number; steps: number; millis: number; reason: string };

export interface CheckResult {
  /** 'illegal' if any partition is; else 'unknown' if any partition ran out of budget; else 'ok'. */
  verdict: 'ok' | 'illegal' | 'unknown';
  partitions: PartitionResult[];
  operations: number;
  millis: number;
}

interface Entry {
  op: number;
  isCall: boolean;
  /** The deadline of an unknown operation: reached while it is pending, it is dropped. */
  isDeadline?: boolean;
  /** On a deadline entry: the operation's call entry. */
  owner?: Entry;
  time: number;
  match: Entry | null;
  prev: Entry | null;
  next: Entry | null;
}

interface Frame<S> {
  entry: Entry;
  before: S;
  results: S[];
  index: number;
  /** The operation was dropped at its deadline (did not take effect): no alternative to try. */
  dropped?: boolean;
}

// Two 32-bit random words per operation; a set's key is their XOR, checked by full equality.
function splitmix(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

function place<I, O>(model: Model<unknown, I, O>, op: Operation<I, O>): PlacedOperation {
  const text = model.describe
    ? model.describe(op.input, op.unknown ? undefined : op.output)
    : JSON.stringify({ input: op.input, output: op.unknown ? 'unknown' : op.output });
  return {
    id: op.id ?? -1,
    client: op.client,
    call: op.call,
    ret: op.unknown ? null : op.ret,
    text,
  };
}

/** Checks one partition (all its operations against one model state). */
export function checkPartition<S, I, O>(
  model: Model<S, I, O>,
  ops: readonly Operation<I, O>[],
  budget: Budget = {},
): PartitionResult {
  const started = performance.now();
  const maxSteps = budget.maxSteps ?? 2_000_000;
  const maxMillis = budget.maxMillis ?? 10_000;
  const n = ops.length;
  const elapsed = (): number => performance.now() - started;

  // Entries in time order; at equal times calls come first (the two operations overlap).
  const entries: Entry[] = [];
  for (let i = 0; i < n; i++) {
    const op = ops[i]!;
    const call: Entry = { op: i, isCall: true, time: op.call, match: null, prev: null, next: null };
    entries.push(call);
    if (op.unknown && op.deadline !== undefined) {
      if (!(op.deadline >= op.call))
        throw new Error(`operation ${op.id ?? i} ends before its call`);
      const end: Entry = {
        op: i,
        isCall: false,
        isDeadline: true,
        owner: call,
        time: op.deadline,
        match: null,
        prev: null,
        next: null,
      };
      call.match = end;
      entries.push(end);
    }
    if (!op.unknown) {
      if (!(op.ret >= op.call)) throw new Error(`operation ${op.id ?? i} returns before its call`);
      const ret: Entry = {
        op: i,
        isCall: false,
        time: op.ret,
        match: null,
        prev: null,
        next: null,
      };
      call.match = ret;
      entries.push(ret);
    }
  }
  entries.sort(
    (a, b) => a.time - b.time || (a.isCall === b.isCall ? a.op - b.op : a.isCall ? -1 : 1),
  );
  const head: Entry = {
    op: -1,
    isCall: false,
    time: -Infinity,
    match: null,
    prev: null,
    next: null,
  };
  let last = head;
  for (const e of entries) {
    last.next = e;
    e.prev = last;
    last = e;
  }

  const lift = (e: Entry): void => {
    e.prev!.next = e.next;
    if (e.next) e.next.prev = e.prev;
    const r = e.match;
    if (r) {
      r.prev!.next = r.next;
      if (r.next) r.next.prev = r.prev;
    }
  };
  const unlift = (e: Entry): void => {
    const r = e.match;
    if (r) {
      r.prev!.next = r;
      if (r.next) r.next.prev = r;
    }
    e.prev!.next = e;
    if (e.next) e.next.prev = e;
  };

  const rand = splitmix(0x5eed);
  const keyA = new Uint32Array(n);
  const keyB = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    keyA[i] = rand();
    keyB[i] = rand();
  }
  const words = Math.ceil(n / 32);
  const linearized = new Uint32Array(words);
  let hashA = 0;
  let hashB = 0;
  let knownLeft = ops.filter((o) => !o.unknown).length;
  const flip = (i: number): void => {
    linearized[i >>> 5]! ^= 1 << (i & 31);
    hashA ^= keyA[i]!;
    hashB ^= keyB[i]!;
    if (!ops[i]!.unknown) knownLeft += (linearized[i >>> 5]! & (1 << (i & 31))) !== 0 ? -1 : 1;
  };

  const cache = new Map<string, { set: Uint32Array; state: S }[]>();
  // True if (linearized, state) was new, and remembers it.
  const remember = (state: S): boolean => {
    const key = `${hashA}:${hashB}:${model.hash(state)}`;
    let seen = cache.get(key);
    if (!seen) {
      seen = [];
      cache.set(key, seen);
    }
    for (const s of seen) {
      if (model.equal(s.state, state) && s.set.every((w, k) => w === linearized[k])) return false;
    }
    seen.push({ set: linearized.slice(), state });
    return true;
  };

  const stack: Frame<S>[] = [];
  let state = model.init();
  let entry: Entry | null = head.next;
  let steps = 0;
  let best: { prefix: number[]; blocking: number; pending: number[] } | null = null;

  const okStates = (s: S, i: number): S[] => {
    const op = ops[i]!;
    const r = model.step(s, op.input, op.unknown ? undefined : op.output);
    const list: readonly StepResult<S>[] = Array.isArray(r) ? r : [r as StepResult<S>];
    return list.filter((x) => x.ok).map((x) => x.state);
  };
  // Tries results[from..] of a call; on the first new one, linearizes it and returns true.
  const tryResults = (e: Entry, before: S, results: S[], from: number): boolean => {
    for (let k = from; k < results.length; k++) {
      flip(e.op);
      if (remember(results[k]!)) {
        stack.push({ entry: e, before, results, index: k });
        state = results[k]!;
        lift(e);
        return true;
      }
      flip(e.op);
    }
    return false;
  };

  // Undoes linearizations (and drops) from the top of the stack until one has another result
  // to try; returns the entry to walk on from, or null when every order has been tried.
  const backtrack = (): Entry | null => {
    for (let f = stack.pop(); f; f = stack.pop()) {
      unlift(f.entry);
      flip(f.entry.op);
      state = f.before;
      if (f.dropped) continue;
      return tryResults(f.entry, f.before, f.results, f.index + 1) ? head.next : f.entry.next;
    }
    return null;
  };

  while (knownLeft > 0) {
    if (++steps > maxSteps || (steps % 4096 === 0 && elapsed() > maxMillis)) {
      const reason =
        steps > maxSteps ? `more than ${maxSteps} search steps` : `more than ${maxMillis} ms`;
      return { verdict: 'unknown', operations: n, steps, millis: elapsed(), reason };
    }
    if (entry === null) throw new Error('internal: ran past the last entry with operations left');
    if (entry.isCall) {
      const e: Entry = entry;
      if (tryResults(e, state, okStates(state, e.op), 0)) entry = head.next;
      else entry = e.next;
      continue;
    }
    if (entry.isDeadline) {
      // An unknown operation still pending at its deadline did not take effect: decide it so.
      // Every call before this point was tried at this state with it pending; without it they
      // have fewer options, so the walk goes on from here.
      const callEntry = entry.owner!;
      flip(entry.op);
      if (remember(state)) {
        stack.push({ entry: callEntry, before: state, results: [state], index: 0, dropped: true });
        const next = entry.next;
        lift(callEntry);
        entry = next;
      } else {
        flip(entry.op);
        entry = backtrack();
        if (entry === null) break;
      }
      continue;
    }
    // A return: its operation had to be linearized by now. Record the deepest failure, backtrack.
    if (best === null || stack.length >= best.prefix.length) {
      const pending: number[] = [];
      for (let p = head.next; p && p !== entry; p = p.next) if (p.isCall) pending.push(p.op);
      best = { prefix: stack.map((f) => f.entry.op), blocking: entry.op, pending };
    }
    entry = backtrack();
    if (entry === null) break;
  }
  if (knownLeft > 0) {
    const b = best!;
    const placed = (i: number): PlacedOperation => place(model as Model<unknown, I, O>, ops[i]!);
    const blocking = placed(b.blocking);
    const pending = b.pending.filter((i) => i !== b.blocking).map(placed);
    const from = Math.min(blocking.call, ...pending.map((p) => p.call));
    return {
      verdict: 'illegal',
      operations: n,
      steps,
      millis: elapsed(),
      failure: {
        longestPrefix: b.prefix.map(placed),
        blocking,
        pending,
        from,
        to: blocking.ret ?? Infinity,
      },
    };
  }
  return { verdict: 'ok', operations: n, steps, millis: elapsed() };
}

/** Checks a whole history: numbers the operations, partitions them, checks each part. */
export function checkOperations<S, I, O>(
  model: Model<S, I, O>,
  history: readonly Operation<I, O>[],
  budget: Budget = {},
): CheckResult {
  const started = performance.now();
  const numbered = history.map((op, i) => (op.id === undefined ? { ...op, id: i } : op));
  const parts = model.partition ? model.partition(numbered) : [numbered];
  const partitions = parts.map((p) => checkPartition(model, p, budget));
  const verdict = partitions.some((p) => p.verdict === 'illegal')
    ? 'illegal'
    : partitions.some((p) => p.verdict === 'unknown')
      ? 'unknown'
      : 'ok';
  return { verdict, partitions, operations: history.length, millis: performance.now() - started };
}

/**
 * A readable account of a failed partition, for test output and reports. With `origin` (the
 * run's start on the same clock), times are shown as seconds since it.
 */
export function formatFailure(failure: FailureWindow, origin?: number): string {
  const at = (t: number | null): string =>
    t === null ? '?' : origin === undefined ? `${t}` : `+${((t - origin) / 1000).toFixed(3)} s`;
  const line = (p: PlacedOperation): string =>
    `  #${p.id} ${p.client} [${at(p.call)}, ${at(p.ret)}] ${p.text}`;
  return [
    `not linearizable in [${at(failure.from)}, ${at(failure.to)}]`,
    `longest linearizable order (${failure.longestPrefix.length} operations), last 10:`,
    ...failure.longestPrefix.slice(-10).map(line),
    'must be placed by its return, and cannot be:',
    line(failure.blocking),
    'pending at that point, none of which can go next:',
    ...failure.pending.map(line),
  ].join('\n');
}
