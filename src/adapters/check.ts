/**
 * What every ORM adapter checks before it wraps a value: that it is the ORM's transaction. A
 * wrong value (the ORM's root object, whose statements would each commit on their own, or
 * undefined, or another ORM's object) is refused at once, naming `tx`, instead of failing at
 * the first query or, worse, not failing at all and leaving the job outside the transaction.
 */
import { InvalidArgumentError } from '../core/errors.js';

/**
 * Refuses `tx` unless it is an object with `method` and `inTransaction` says it is one (each
 * ORM marks its transactions its own way).
 */
export function requireTransaction<T>(
  tx: T,
  method: string,
  inTransaction: (tx: T) => boolean,
  expected: string,
): void {
  const usable =
    (typeof tx === 'object' || typeof tx === 'function') &&
    tx !== null &&
    typeof (tx as Record<string, unknown>)[method] === 'function';
  if (!usable || !inTransaction(tx)) throw new InvalidArgumentError('tx', `must be ${expected}`);
}
