/**
 * Typed events. Every background service emits what it did (`election:elected`,
 * `rescuer:ran`, `worker:drained`, …) through one of these; tests await the events instead of
 * sleeping, and the dashboard, metrics and logs subscribe to the same stream.
 *
 * A listener that throws is isolated: it must never break the loop that emitted the event.
 */
export type EventMap = Record<string, unknown>;

export type Listener<T> = (payload: T) => void;

export class TypedEvents<M extends EventMap> {
  private readonly listeners = new Map<keyof M, Set<Listener<never>>>();
  private readonly anyListeners = new Set<(name: keyof M, payload: M[keyof M]) => void>();

  on<K extends keyof M>(name: K, listener: Listener<M[K]>): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(listener as Listener<never>);
    return () => set.delete(listener as Listener<never>);
  }

  /** Every event, whatever its name: for bridges (SSE, metrics, logs). */
  onAny(listener: (name: keyof M, payload: M[keyof M]) => void): () => void {
    this.anyListeners.add(listener);
    return () => this.anyListeners.delete(listener);
  }

  /** Resolves with the next `name` event that satisfies `match`; rejects after `timeoutMs`. */
  once<K extends keyof M>(
    name: K,
    { timeoutMs = 10_000, match }: { timeoutMs?: number; match?: (payload: M[K]) => boolean } = {},
  ): Promise<M[K]> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`no "${String(name)}" event within ${timeoutMs} ms`));
      }, timeoutMs);
      const off = this.on(name, (payload) => {
        if (match && !match(payload)) return;
        clearTimeout(timer);
        off();
        resolve(payload);
      });
    });
  }

  emit<K extends keyof M>(name: K, payload: M[K]): void {
    this.tellListeners(name, payload);
    for (const listener of this.anyListeners) {
      try {
        listener(name, payload);
      } catch {
        // a subscriber's bug must not break the emitter's loop
      }
    }
  }

  /**
   * Tells a deprecated name of an event that was just emitted under its current name (decision
   * 0235): its own listeners hear it, `onAny` bridges do not, since they saw the event once.
   */
  emitAlias<K extends keyof M>(name: K, payload: M[K]): void {
    this.tellListeners(name, payload);
  }

  private tellListeners<K extends keyof M>(name: K, payload: M[K]): void {
    for (const listener of this.listeners.get(name) ?? []) {
      try {
        (listener as Listener<M[K]>)(payload);
      } catch {
        // a subscriber's bug must not break the emitter's loop
      }
    }
  }
}
