/**
 * The seed's fake work, shared by the HTTP and the in-process task workers: sleep
 * `task_data.sleep_duration_seconds` (default 1 s, at most an hour), stopping the moment the
 * claim's signal fires; and, with a crash rate, the instant within that sleep at which the
 * process dies on purpose, so the demo shows a claim expiring and another worker taking over.
 */
import { sleep, type Clock } from '../core/clock.js';

/** Sleeps as the task asks, or rejects with the signal's reason when it fires first. */
export async function demoWork(
  taskData: unknown,
  clock: Clock,
  signal: AbortSignal,
): Promise<{ slept_seconds: number }> {
  const ms = sleepMs(taskData);
  await sleep(clock, ms, signal);
  return { slept_seconds: ms / 1000 };
}

/** When to crash mid-task (ms after the start), or undefined for a task that runs its course. */
export function crashDelayMs(
  taskData: unknown,
  crashRate: number,
  random: () => number,
): number | undefined {
  if (!(crashRate > 0) || random() >= crashRate) return undefined;
  return Math.max(10, Math.floor(random() * sleepMs(taskData)));
}

function sleepMs(taskData: unknown): number {
  const seconds = Number(
    (taskData as { sleep_duration_seconds?: unknown } | null)?.sleep_duration_seconds ?? 1,
  );
  return Number.isFinite(seconds) ? Math.min(Math.max(seconds, 0), 3_600) * 1000 : 1000;
}
