/**
 * A worker's events for one job come in attempt order (docs/queue.md, "How a job moves"): an
 * attempt claimed by the same worker while the job's earlier attempt is still being written and
 * reported (a retry with no backoff, a sleeper woken at once) starts only after that report.
 * Rare, so a waiter is made only then; the common path is one set insert and delete a job.
 */
export class AttemptOrder {
  /** Job ids whose attempt's outcome is being written and reported. */
  private readonly reporting = new Set<number>();
  /** The later attempt of such a job, claimed meanwhile, waiting for its turn. */
  private readonly waiting = new Map<number, () => void>();

  /** Whether an attempt of `jobId` claimed now must wait for its turn. */
  mustWait(jobId: number): boolean {
    return this.reporting.has(jobId);
  }

  /** Resolves when the earlier attempt of `jobId` has been reported. */
  turn(jobId: number): Promise<void> {
    return new Promise((resolve) => this.waiting.set(jobId, resolve));
  }

  /** An attempt of `jobId` is being written and reported. */
  begin(jobId: number): void {
    this.reporting.add(jobId);
  }

  /** …and has been: a later attempt waiting for its turn starts. */
  end(jobId: number): void {
    this.reporting.delete(jobId);
    const next = this.waiting.get(jobId);
    if (next) {
      this.waiting.delete(jobId);
      next();
    }
  }
}
