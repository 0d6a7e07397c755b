/**
 * The trends series from GET /api/trends, refetched while the page is live: at most every
 * REFRESH_MS, on the snapshot's tick (so a page that lost its stream stops asking too).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from './api.js';
import type { TrendSeriesView } from './types.js';

export const REFRESH_MS = 5_000;

export function useTrends(
  range: '1h' | '1d',
  queue: string | null,
  tick: string,
  onError: (message: string) => void,
): TrendSeriesView | null {
  const [series, setSeries] = useState<TrendSeriesView | null>(null);
  const last = useRef<{ key: string; at: number } | null>(null);
  useEffect(() => {
    const key = `${range}|${queue ?? ''}`;
    const now = Date.now();
    if (last.current && last.current.key === key && now - last.current.at < REFRESH_MS) return;
    last.current = { key, at: now };
    const query = new URLSearchParams({ window: range });
    if (queue !== null) query.set('queue', queue);
    api<TrendSeriesView>('GET', `/api/trends?${query}`)
      .then((answer) => {
        // A late answer for a window or queue no longer shown is dropped.
        if (last.current?.key === key) setSeries(answer);
      })
      .catch((error: Error) => onError(error.message));
  }, [range, queue, tick]);
  return series;
}
