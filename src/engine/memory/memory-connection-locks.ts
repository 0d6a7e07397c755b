/**
 * Advisory and session locks emulated in process, with PostgreSQL's semantics: a lock is held
 * by a handle (standing in for its connection) until released; waiters queue in arrival order
 * and are granted on release; session tokens come from one counter that only grows, as the
 * sequence does. Closing the engine is a dropped connection: every holder's signal fires.
 */
import { AbortedError, LeaseLostError } from '../../core/errors.js';
import type { FencingToken } from '../../core/types.js';
import {
  waitAbortError,
  type ConnectionLock,
  type ConnectionLockOperations,
  type ConnectionLockParams,
  type ConnectionLockWaitParams,
  type SessionLock,
} from '../connection-locks.js';

type Kind = 'advisory' | 'session';

class MemoryConnectionLock implements SessionLock {
  readonly backendPid = null;
  private readonly controller = new AbortController();

  constructor(
    readonly name: string,
    readonly token: FencingToken,
    private readonly free: (lock: MemoryConnectionLock) => void,
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  async release(): Promise<boolean> {
    if (this.controller.signal.aborted) return false;
    this.controller.abort(new AbortedError(`lock "${this.name}" was released by its holder`));
    this.free(this);
    return true;
  }

  drop(reason: string): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort(new LeaseLostError(this.name, reason));
    this.free(this);
  }
}

interface Waiter {
  grant(lock: MemoryConnectionLock): void;
  fail(error: Error): void;
}

export class MemoryConnectionLocks implements ConnectionLockOperations {
  private readonly held = new Map<string, MemoryConnectionLock>();
  private readonly queues = new Map<string, Waiter[]>();
  private nextToken = 1;

  async advisoryTryLock(p: ConnectionLockParams): Promise<ConnectionLock | null> {
    return this.tryTake('advisory', p.name);
  }

  advisoryLock(p: ConnectionLockWaitParams): Promise<ConnectionLock> {
    return this.take('advisory', p.name, p.signal);
  }

  async sessionLockTryAcquire(p: ConnectionLockParams): Promise<SessionLock | null> {
    return this.tryTake('session', p.name) as SessionLock | null;
  }

  sessionLockAcquire(p: ConnectionLockWaitParams): Promise<SessionLock> {
    return this.take('session', p.name, p.signal);
  }

  tryTake(kind: Kind, name: string): ConnectionLock | SessionLock | null {
    const key = `${kind}:${name}`;
    if (this.held.has(key)) return null;
    return this.grant(kind, name);
  }

  take(kind: Kind, name: string, signal: AbortSignal): Promise<SessionLock> {
    if (signal.aborted) return Promise.reject(waitAbortError(signal));
    const key = `${kind}:${name}`;
    if (!this.held.has(key)) return Promise.resolve(this.grant(kind, name));
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        const queue = this.queues.get(key) ?? [];
        queue.splice(queue.indexOf(waiter), 1);
        reject(waitAbortError(signal));
      };
      const waiter: Waiter = {
        grant: (lock) => {
          signal.removeEventListener('abort', onAbort);
          resolve(lock);
        },
        fail: (error) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const queue = this.queues.get(key) ?? [];
      queue.push(waiter);
      this.queues.set(key, queue);
    });
  }

  close(error: Error): void {
    for (const lock of [...this.held.values()]) lock.drop('the engine was closed');
    for (const queue of this.queues.values())
      for (const waiter of queue.splice(0)) waiter.fail(error);
  }

  private grant(kind: Kind, name: string): MemoryConnectionLock {
    const key = `${kind}:${name}`;
    // Advisory locks carry no token; the field is 0 and not part of their public type.
    const token = kind === 'session' ? this.nextToken++ : 0;
    const lock = new MemoryConnectionLock(name, token, (freed) => this.free(key, freed));
    this.held.set(key, lock);
    return lock;
  }

  /** The holder let go: the longest waiter gets the lock in the same step, as on PostgreSQL. */
  private free(key: string, lock: MemoryConnectionLock): void {
    if (this.held.get(key) !== lock) return;
    this.held.delete(key);
    const waiter = this.queues.get(key)?.shift();
    if (!waiter) return;
    const [kind, ...rest] = key.split(':');
    waiter.grant(this.grant(kind as Kind, rest.join(':')));
  }
}
