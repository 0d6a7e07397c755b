import type { Operation } from './search.js';

/** Splits a history by a key (the resource), keeping each part in history order. */
export function partitionBy<I, O>(
  ops: readonly Operation<I, O>[],
  key: (input: I) => string,
): Operation<I, O>[][] {
  const parts = new Map<string, Operation<I, O>[]>();
  for (const op of ops) {
    const k = key(op.input);
    let part = parts.get(k);
    if (!part) {
      part = [];
      parts.set(k, part);
    }
    part.push(op);
  }
  return [...parts.values()];
}
