import { useEffect, useState } from 'preact/hooks';

/** Re-renders every `ms` and returns Date.now(): for countdowns and shrinking bars. */
export function useNow(ms = 200): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}

export function ago(iso: string | null, now: number, offsetMs: number): string {
  if (!iso) return '–';
  const seconds = Math.round((now + offsetMs - Date.parse(iso)) / 1000);
  if (seconds < 60) return `${Math.max(0, seconds)}s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)}m ago`;
  return `${Math.round(seconds / 3600)}h ago`;
}

/** A span of time in words: `42s`, `3m 5s`, `2h 10m`. */
export function span(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
  return `${Math.floor(seconds / 3600)}h ${Math.floor((seconds % 3600) / 60)}m`;
}

/** How far `iso` is from now on the database clock: `in 4s`, `now`, `12s overdue`. */
export function until(iso: string, now: number, offsetMs: number): string {
  const ms = Date.parse(iso) - (now + offsetMs);
  if (ms > 500) return `in ${span(ms)}`;
  return ms > -1_500 ? 'now' : `${span(-ms)} overdue`;
}
