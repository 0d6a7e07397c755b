import { LIVENESS_MS } from './wait.js';

/** Collects callback events so a test can await them one by one, with a timeout. */
export class EventQueue<T> {
  private readonly items: T[] = [];
  private readonly waiters: ((item: T) => void)[] = [];

  readonly push = (item: T): void => {
    const waiter = this.waiters.shift();
    if (waiter) waiter(item);
    else this.items.push(item);
  };

  get length(): number {
    return this.items.length;
  }

  next(timeoutMs = LIVENESS_MS, what = 'the next event'): Promise<T> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve(item);
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(onItem), 1);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const onItem = (value: T): void => {
        clearTimeout(timer);
        resolve(value);
      };
      this.waiters.push(onItem);
    });
  }
}
