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
