/**
 * A burn-down's finish line: handlers count completions, the scenario waits for all of them or
 * for its time limit (a default configuration can be far too slow to drain a large backlog; its
 * rate is then measured over the limit and marked as capped).
 */
export interface DrainResult {
  /** Jobs per second over the jobs that completed. */
  readonly rate: number;
  readonly completed: number;
  /** True when the time limit ended the run before every job completed. */
  readonly capped: boolean;
}

export class Countdown {
  private done = 0;
  private finish!: () => void;
  private readonly all = new Promise<void>((resolve) => (this.finish = resolve));
  private readonly started = performance.now();

  constructor(private readonly total: number) {
    if (total <= 0) this.finish();
  }

  /** Records `count` completions. */
  add(count = 1): void {
    this.done += count;
    if (this.done >= this.total) this.finish();
  }

  /** Waits for every job, or `limitMs`; the rate is measured from construction. */
  async wait(limitMs: number): Promise<DrainResult> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, limitMs)));
    await Promise.race([this.all, timeout]);
    clearTimeout(timer);
    const completed = Math.min(this.done, this.total);
    const seconds = (performance.now() - this.started) / 1000;
    return { rate: completed / seconds, completed, capped: completed < this.total };
  }
}
