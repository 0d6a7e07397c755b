/**
 * What a caller may say about a job when enqueueing it, and the one place that checks it. The
 * library, the HTTP service and the CLI all pass through `toJobSpec`, so a bad option gets the
 * same `invalid_argument` naming the same field everywhere, and nothing is written.
 */
import { toMilliseconds, typeName, type Duration } from '../core/duration.js';
import { InvalidArgumentError } from '../core/errors.js';
import { LIMITS, requireName, requireSafeInteger, unstorableText } from '../core/validate.js';
import type { CallerTransaction } from '../engine/engine.js';
import type { JobSpec } from '../engine/jobs.js';

export const QUEUE_LIMITS = {
  /** Enough for any retry policy a human would choose; a runaway value is a typo. */
  maxAttemptsMax: 1_000,
  /** Ten by default: a day of retries with the default backoff, then the dead letter. */
  maxAttemptsDefault: 10,
  priorityMin: -1_000_000,
  priorityMax: 1_000_000,
  /** A payload is a message, not a document store: 1 MiB of JSON. */
  payloadMaxBytes: 1024 * 1024,
  headerCountMax: 64,
  /** One year: a job meant to run later than that is a calendar entry, not a job. */
  delayMaxMs: 366 * 24 * 60 * 60 * 1000,
  /**
   * A job's (or a worker's default) timeout: at most 7 days. A longer attempt is better served by
   * its lease and its signal alone; the cap also keeps the stored ms well inside an integer.
   */
  timeoutMaxMs: 7 * 24 * 60 * 60 * 1000,
} as const;

export interface EnqueueOptions {
  /** A label for routing or versioning, such as `send-email.v1`. */
  type?: string;
  /** Small string metadata (trace ids, tenants); at most 64 entries. */
  headers?: Record<string, string>;
  /** Dedup: while a job with this key is pending or processing in this queue, enqueue returns it. */
  key?: string;
  /**
   * What an enqueue with the `key` of a live job does (needs `key`): `'keep'` (the default)
   * answers that job unchanged; `'replace'` overwrites it while it is pending (type, payload,
   * headers, priority, maxAttempts, timeout and run time) and answers it with `replaced: true`.
   * A running job is never changed: it is answered as it is.
   */
  onConflict?: 'keep' | 'replace';
  /**
   * Run once, this long after the last enqueue with the same `key` (needs `key`; instead of
   * `delay`/`runAt`): each enqueue replaces the pending job and pushes its run time out, the
   * last payload wins. An enqueue while the keyed job is running makes one more run: the new
   * job takes the key, the running one goes on without it. Implies `onConflict: 'replace'`.
   */
  debounce?: Duration;
  /** Jobs with the same partition key run one at a time, in enqueue order. */
  partitionKey?: string;
  /** Larger runs first; default 0. */
  priority?: number;
  /** Not before this long from now (database time)… */
  delay?: Duration;
  /** …or not before this instant. */
  runAt?: Date;
  /** Claims before the job is dead-lettered; default 10. */
  maxAttempts?: number;
  /**
   * How long one attempt may run: at the timeout the handler's signal fires with a
   * `JobTimeoutError` and the attempt fails (retried per the worker's policy), whether or not the
   * handler stops. Stored on the job; beats the worker's `timeout`. At most 7 days.
   */
  timeout?: Duration;
  /** Enqueue inside your own transaction (a pg `PoolClient` inside BEGIN, or anything with `query`). */
  tx?: CallerTransaction;
}

export function toJobSpec(queue: string, payload: unknown, options: EnqueueOptions = {}): JobSpec {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', `must be an object, got ${typeName(options)}`);
  const spec: JobSpec = {
    queue: requireName('queue', queue),
    payload: requirePayload(payload),
    maxAttempts:
      options.maxAttempts === undefined
        ? QUEUE_LIMITS.maxAttemptsDefault
        : requireSafeInteger('maxAttempts', options.maxAttempts, 1),
  };
  if (spec.maxAttempts > QUEUE_LIMITS.maxAttemptsMax)
    throw new InvalidArgumentError('maxAttempts', `must be at most ${QUEUE_LIMITS.maxAttemptsMax}`);
  if (options.type !== undefined) spec.type = requireName('type', options.type);
  if (options.key !== undefined) spec.key = requireName('key', options.key);
  if (options.partitionKey !== undefined)
    spec.partitionKey = requireName('partitionKey', options.partitionKey);
  if (options.headers !== undefined) spec.headers = requireHeaders(options.headers);
  if (options.priority !== undefined) spec.priority = requirePriority(options.priority);
  if (options.runAt !== undefined && options.delay !== undefined)
    throw new InvalidArgumentError('runAt', 'give either runAt or delay, not both');
  if (options.runAt !== undefined) {
    if (!(options.runAt instanceof Date) || Number.isNaN(options.runAt.getTime()))
      throw new InvalidArgumentError(
        'runAt',
        `must be a valid Date, got ${typeName(options.runAt)}`,
      );
    spec.runAt = options.runAt;
  }
  if (options.delay !== undefined)
    spec.delayMs = toMilliseconds('delay', options.delay, {
      min: 0,
      max: QUEUE_LIMITS.delayMaxMs,
    });
  if (options.timeout !== undefined) spec.timeoutMs = toTimeoutMs(options.timeout);
  if (options.onConflict !== undefined) spec.onConflict = requireOnConflict(options);
  if (options.debounce !== undefined) {
    spec.delayMs = requireDebounceMs(options);
    spec.onConflict = 'replace';
    spec.debounce = true;
  }
  return spec;
}

export const ON_CONFLICT = ['keep', 'replace'] as const;

function requireOnConflict(options: EnqueueOptions): 'keep' | 'replace' {
  const value: unknown = options.onConflict;
  if (!ON_CONFLICT.includes(value as 'keep'))
    throw new InvalidArgumentError(
      'onConflict',
      `must be 'keep' or 'replace', got ${typeof value === 'string' ? `'${value}'` : typeName(value)}`,
    );
  if (value === 'replace' && options.key === undefined)
    throw new InvalidArgumentError('onConflict', "'replace' needs a key, the job it replaces");
  return value as 'keep' | 'replace';
}

/** The debounce window in ms (decision 0252): a positive duration, as long as a delay at most. */
function requireDebounceMs(options: EnqueueOptions): number {
  const ms = toMilliseconds('debounce', options.debounce, {
    min: 1,
    max: QUEUE_LIMITS.delayMaxMs,
  });
  if (options.key === undefined)
    throw new InvalidArgumentError('debounce', 'needs a key: the job runs once per key');
  if (options.runAt !== undefined || options.delay !== undefined)
    throw new InvalidArgumentError(
      'debounce',
      'sets the run time itself: give either debounce or runAt/delay, not both',
    );
  if (options.onConflict === 'keep')
    throw new InvalidArgumentError(
      'onConflict',
      "'keep' contradicts debounce, which replaces the pending job: leave onConflict out",
    );
  return ms;
}

/** A job's or a worker's `timeout` in ms: a positive duration of at most 7 days. */
export function toTimeoutMs(value: unknown): number {
  return toMilliseconds('timeout', value, { min: 1, max: QUEUE_LIMITS.timeoutMaxMs });
}

/**
 * Any JSON value within the size limit that jsonb can store (no NUL, no lone surrogate, in keys
 * or strings); `undefined` and functions are not JSON.
 */
const MAYBE_UNSTORABLE = /\\u(?:0000|d[89a-f])/i;

function requirePayload(payload: unknown): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(payload);
  } catch (error) {
    throw new InvalidArgumentError('payload', `must be serialisable as JSON (${String(error)})`);
  }
  if (text === undefined)
    throw new InvalidArgumentError('payload', `must be a JSON value, got ${typeName(payload)}`);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > QUEUE_LIMITS.payloadMaxBytes)
    throw new InvalidArgumentError(
      'payload',
      `must be at most ${QUEUE_LIMITS.payloadMaxBytes} bytes of JSON, got ${bytes}`,
    );
  // What is stored is what JSON makes of it (a Date becomes a string): hand that on, so both
  // engines store the same value.
  const parsed = JSON.parse(text) as unknown;
  // JSON.stringify escapes both NUL and lone surrogates (\u0000, \udxxx): only a text holding
  // such an escape needs the exact walk, so the common payload costs one scan.
  if (MAYBE_UNSTORABLE.test(text)) {
    const bad = unstorableText(parsed);
    if (bad)
      throw new InvalidArgumentError('payload', `must not contain ${bad} in keys or strings`);
  }
  return parsed;
}

function requireHeaders(headers: unknown): Record<string, string> {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
    throw new InvalidArgumentError('headers', `must be an object, got ${typeName(headers)}`);
  const entries = Object.entries(headers);
  if (entries.length > QUEUE_LIMITS.headerCountMax)
    throw new InvalidArgumentError(
      'headers',
      `must have at most ${QUEUE_LIMITS.headerCountMax} entries`,
    );
  const out: Record<string, string> = {};
  for (const [name, value] of entries) {
    requireName('headers key', name);
    out[name] = requireName(`headers.${name}`, value, LIMITS.nameMaxLength * 4);
  }
  return out;
}

function requirePriority(priority: unknown): number {
  const value = requireSafeInteger('priority', priority, QUEUE_LIMITS.priorityMin);
  if (value > QUEUE_LIMITS.priorityMax)
    throw new InvalidArgumentError('priority', `must be at most ${QUEUE_LIMITS.priorityMax}`);
  return value;
}
