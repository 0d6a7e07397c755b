/**
 * Concurrent requests of one kind become one statement. Each lease request to the HTTP service,
 * and each single enqueue, is alone a tiny transaction whose round trip and commit cost more
 * than its work; requests that arrive while an earlier statement of their kind is being written
 * wait for it and the next turn of the event loop, and go to the database together (the
 * engine's many-lease calls, one multi-row enqueue). Alone, a request goes at once on its own:
 * coalescing adds no wait to an idle process.
 *
 * Callers that take turns (HTTP clients renewing in a loop) split into cohorts: the list sent
 * the moment a statement returns carries only what arrived while it was out, so its callers
 * and the previous list's alternate, each statement (and each WAL flush) carrying half of them.
 * With `gatherMs`, when a list of k returns with w requests waiting, the next list waits until
 * k + w are waiting (the k callers just answered asking again) or `gatherMs` has passed, and
 * the cohorts merge. A list of one is never gathered for, so a lone caller never waits.
 *
 * A list never holds two requests with the same key (a lease's resource), so it is one
 * statement: it commits or fails as a whole. When it fails, each request is retried alone, so
 * one bad request cannot fail its neighbours and every caller gets its own answer or error;
 * unless `failWhole` says the failure is not one request's: the list may have committed (its
 * answer was lost), where a retry could apply a request twice, or the database cannot be
 * reached, where retries alone only multiply the waiting; every caller then gets that error.
 *
 * A statement still in flight after `stallMs` stops holding the others back, but never the
 * requests that share an order key with it (`orderKeys`: an enqueue's partition and dedup
 * key): those wait until it returns, so requests of one order key reach the database, and
 * commit, in the order they were made, under any stall (decision 0220).
 */
export interface CoalescerOptions<P, R> {
  /** One request alone. */
  one: (params: P) => Promise<R>;
  /** Many requests with distinct keys, answered in order. */
  many: (params: readonly P[]) => Promise<R[]>;
  /** Requests with the same key never share a list (default: every request its own key). */
  key?: (params: P) => string;
  /**
   * Requests sharing an order key commit in call order: none is sent while a list holding an
   * earlier one is in flight, stalled or not, and a failed list's are retried one after
   * another (default: none).
   */
  orderKeys?: (params: P) => readonly string[];
  /**
   * The error every caller of a failed list gets instead of a retry alone, when the failure is
   * the list's and not one request's (its outcome is unknown, the database is unreachable);
   * undefined retries each request alone (the default).
   */
  failWhole?: (error: unknown, size: number) => Error | undefined;
  /** Largest list (default 100). */
  maxBatch?: number;
  /** Statements of this kind in flight at once; beyond, requests gather (default 1). */
  maxInFlight?: number;
  /**
   * A statement in flight longer than this (a row lock held by someone's transaction, say) no
   * longer holds the others back: it stops counting toward maxInFlight (default 25 ms).
   */
  stallMs?: number;
  /**
   * After a list of k > 1 returns with w requests waiting, wait this long at most for k + w to
   * be waiting before sending the next list (default 0: send at once).
   */
  gatherMs?: number;
}

interface Pending<P, R> {
  params: P;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

export class Coalescer<P, R> {
  private waiting: Pending<P, R>[] = [];
  private inFlight = 0;
  private scheduled = false;
  /** Gathering after a list returned: the next list waits for `target` requests or the timer. */
  private gathering: { target: number; timer: NodeJS.Timeout } | undefined;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly stallMs: number;
  private readonly gatherMs: number;
  /** Order keys of the lists in flight (stalled ones too), with how many lists hold each. */
  private readonly busyKeys = new Map<string, number>();

  constructor(private readonly o: CoalescerOptions<P, R>) {
    this.maxBatch = o.maxBatch ?? 100;
    this.maxInFlight = o.maxInFlight ?? 1;
    this.stallMs = o.stallMs ?? 25;
    this.gatherMs = o.gatherMs ?? 0;
  }

  run(params: P): Promise<R> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ params, resolve, reject });
      if (this.gathering && this.waiting.length >= this.gathering.target) this.stopGathering();
      else this.schedule();
    });
  }

  /** Statements sent so far, and the requests they carried: for metrics and tests. */
  readonly sent = { statements: 0, requests: 0 };

  // setImmediate, not a microtask: requests read from other sockets in this same turn of the
  // event loop join the list.
  private schedule(): void {
    if (
      this.scheduled ||
      this.gathering ||
      this.inFlight >= this.maxInFlight ||
      this.waiting.length === 0
    )
      return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const list = this.takeList();
      // Everything waiting shares an order key with a list still in flight: it returns first.
      if (list.length === 0) return;
      const keys = this.holdOrderKeys(list);
      this.inFlight++;
      let counted = true;
      const uncount = (returned: boolean): void => {
        if (!counted) return;
        counted = false;
        clearTimeout(stalled);
        this.inFlight--;
        // Its callers are about to ask again: give them a moment to join the next list.
        if (returned && this.gatherMs > 0 && list.length > 1)
          this.startGathering(Math.min(this.maxBatch, list.length + this.waiting.length));
        this.schedule();
      };
      const stalled = setTimeout(() => uncount(false), this.stallMs);
      void this.send(list).finally(() => {
        this.releaseOrderKeys(keys);
        uncount(true);
        this.schedule(); // requests held back by these keys may go now
      });
    }
  }

  private startGathering(target: number): void {
    if (this.gathering) return;
    this.gathering = { target, timer: setTimeout(() => this.stopGathering(), this.gatherMs) };
  }

  private stopGathering(): void {
    if (!this.gathering) return;
    clearTimeout(this.gathering.timer);
    this.gathering = undefined;
    this.schedule();
  }

  /**
   * The oldest waiting requests with distinct keys, in arrival order; the rest keep waiting. A
   * request whose order key is in flight, or held back here, is held back too.
   */
  private takeList(): Pending<P, R>[] {
    const keys = new Set<string>();
    const heldBack = new Set<string>();
    const list: Pending<P, R>[] = [];
    const rest: Pending<P, R>[] = [];
    for (const pending of this.waiting) {
      const key = this.o.key?.(pending.params);
      const orderKeys = this.o.orderKeys?.(pending.params) ?? [];
      if (
        list.length < this.maxBatch &&
        (key === undefined || !keys.has(key)) &&
        !orderKeys.some((k) => this.busyKeys.has(k) || heldBack.has(k))
      ) {
        if (key !== undefined) keys.add(key);
        list.push(pending);
      } else {
        for (const k of orderKeys) heldBack.add(k);
        rest.push(pending);
      }
    }
    this.waiting = rest;
    return list;
  }

  private holdOrderKeys(list: Pending<P, R>[]): string[] {
    if (!this.o.orderKeys) return [];
    const keys = [...new Set(list.flatMap((p) => this.o.orderKeys!(p.params)))];
    for (const k of keys) this.busyKeys.set(k, (this.busyKeys.get(k) ?? 0) + 1);
    return keys;
  }

  private releaseOrderKeys(keys: string[]): void {
    for (const k of keys) {
      const n = this.busyKeys.get(k)! - 1;
      if (n === 0) this.busyKeys.delete(k);
      else this.busyKeys.set(k, n);
    }
  }

  private async send(list: Pending<P, R>[]): Promise<void> {
    this.sent.statements++;
    this.sent.requests += list.length;
    if (list.length > 1) {
      let results: R[] | undefined;
      try {
        results = await this.o.many(list.map((p) => p.params));
      } catch (error) {
        // Retried one by one below, so each caller gets its own answer or its own error; but a
        // list that may have committed is not sent again.
        const whole = this.o.failWhole?.(error, list.length);
        if (whole) {
          for (const p of list) p.reject(whole);
          return;
        }
      }
      if (results) {
        list.forEach((p, i) => p.resolve(results[i]!));
        return;
      }
    }
    const retry = (p: Pending<P, R>): Promise<void> =>
      this.o.one(p.params).then(p.resolve, p.reject);
    // Requests with order keys one after another, in call order, so that two of one key cannot
    // overtake each other; the others at once beside them.
    const ordered: Pending<P, R>[] = [];
    const free: Pending<P, R>[] = [];
    for (const p of list)
      ((this.o.orderKeys?.(p.params) ?? []).length > 0 ? ordered : free).push(p);
    await Promise.all([
      ...free.map(retry),
      (async () => {
        for (const p of ordered) await retry(p);
      })(),
    ]);
  }
}
