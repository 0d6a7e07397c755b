/**
 * The terms one Leasehold instance holds in the background (held leases, lease locks, semaphore
 * permits), so that `lh.close()` can give them up (decision 0285). Each is forgotten as soon as
 * it ends (its signal fires on every end: released, lost or expired), so a long-running
 * process that holds and releases many keeps only those still held.
 */
export interface HeldTerm {
  /** Aborts when the term ends, however it ends. */
  readonly signal: AbortSignal;
  /** Ends the term as lost (`why` in its LeaseLostError) and releases it (HeldLease). */
  relinquish(why: string): Promise<unknown>;
}

export class HeldTerms {
  private readonly held = new Set<HeldTerm>();

  /** Keeps `term` until it ends; answers it, for `return terms.track(new …)`. */
  track<T extends HeldTerm>(term: T): T {
    if (term.signal.aborted) return term;
    this.held.add(term);
    term.signal.addEventListener('abort', () => this.held.delete(term), { once: true });
    return term;
  }

  /** How many terms are held now. */
  get size(): number {
    return this.held.size;
  }

  /**
   * Ends every term still held as lost, saying `why`, and releases it: each once, all at the
   * same time. Lost, not released by its holder: work still running under a term (a `withLease`
   * or `runLocked` function) can no longer count on it, and learns so as it would of a refused
   * renewal. A release that fails (the database unreachable) is left to the term's expiry: the
   * holder is going away either way.
   */
  async relinquishAll(why: string): Promise<void> {
    const terms = [...this.held];
    this.held.clear();
    await Promise.all(terms.map((t) => t.relinquish(why).catch(() => undefined)));
  }
}
