/** A queue's flow control in words, as the Jobs and Queues sections show it. */
import type { QueueSettingsView } from './types.js';

/** `1s`, `250ms`, `5m`, `1h`, or `1500ms` when it is no whole unit. */
export function perText(ms: number): string {
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const)
    if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** The limits in force: `5 at once · 2 per key · 100/1s · fair by key`, or `none`. */
export function limitsText(s: QueueSettingsView | undefined): string {
  if (!s) return 'none';
  const parts: string[] = [];
  if (s.concurrency !== null) parts.push(`${s.concurrency} at once`);
  if (s.perKeyConcurrency !== 1)
    parts.push(s.perKeyConcurrency === null ? 'any per key' : `${s.perKeyConcurrency} per key`);
  if (s.rate) parts.push(`${s.rate.limit}/${perText(s.rate.per)}`);
  if (s.fairness === 'key') parts.push('fair by key');
  return parts.length ? parts.join(' · ') : 'none';
}
