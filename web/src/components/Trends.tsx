/**
 * Trends (issue 30 part 5): throughput, failure rate, pickup latency and depth over the last
 * hour or day, from the per-minute figures the maintainer records (decision 0265), for every
 * queue or one. Refetched as the snapshot ticks (web/src/trends.ts), so the charts move live.
 */
import { useState } from 'preact/hooks';
import { useTrends } from '../trends.js';
import type { Snapshot } from '../types.js';
import { LineChart } from './LineChart.js';

const WINDOWS = [
  ['1h', 'Last hour'],
  ['1d', 'Last day'],
] as const;

const perMinute = (v: number) => `${v < 10 ? v.toFixed(1) : Math.round(v)}/min`;
const percent = (v: number) => `${(v * 100).toFixed(v < 0.1 ? 1 : 0)}%`;
const ms = (v: number) => (v < 1_000 ? `${Math.round(v)} ms` : `${(v / 1_000).toFixed(1)} s`);
const jobs = (v: number) => `${Math.round(v)}`;

export function Trends({
  snapshot,
  onError,
}: {
  snapshot: Snapshot;
  onError: (message: string) => void;
}) {
  const [range, setRange] = useState<'1h' | '1d'>('1h');
  const [queue, setQueue] = useState<string | null>(null);
  const series = useTrends(range, queue, snapshot.at, onError);
  const queues = [
    ...new Set([...snapshot.jobs.map((j) => j.queue), ...snapshot.queues.map((q) => q.queue)]),
  ].sort();
  const points = series?.points ?? [];
  const step = series?.stepMinutes ?? 1;
  return (
    <section id="trends" aria-labelledby="trends-title">
      <div class="section-head">
        <h2 id="trends-title">Trends</h2>
        <div class="trend-controls">
          <label>
            Queue{' '}
            <select
              value={queue ?? ''}
              onChange={(e) => setQueue((e.target as HTMLSelectElement).value || null)}
            >
              <option value="">All queues</option>
              {queues.map((q) => (
                <option key={q} value={q}>
                  {q}
                </option>
              ))}
            </select>
          </label>
          <div class="segmented" role="group" aria-label="Window">
            {WINDOWS.map(([value, label]) => (
              <button
                key={value}
                type="button"
                aria-pressed={range === value}
                onClick={() => setRange(value)}
              >
                {label}
              </button>
            ))}
          </div>
        </div>
      </div>
      {!series ? (
        <p class="muted">Loading…</p>
      ) : (
        <>
          <div class="charts">
            <LineChart
              id="throughput"
              title="Throughput"
              format={perMinute}
              series={[
                {
                  name: 'completed',
                  tone: 'line-1',
                  values: points.map((p) => p.completed / step),
                },
                {
                  name: 'failed',
                  tone: 'line-3',
                  values: points.map((p) => (p.failed + p.dead) / step),
                },
              ]}
            />
            <LineChart
              id="failure-rate"
              title="Failure rate"
              format={percent}
              series={[
                { name: 'failed', tone: 'line-3', values: points.map((p) => p.failureRate) },
              ]}
            />
            <LineChart
              id="pickup"
              title="Pickup latency"
              format={ms}
              series={[
                { name: 'p50', tone: 'line-1', values: points.map((p) => p.pickupP50Ms) },
                { name: 'p99', tone: 'line-2', values: points.map((p) => p.pickupP99Ms) },
              ]}
            />
            <LineChart
              id="depth"
              title="Depth"
              format={jobs}
              series={[
                {
                  name: 'pending',
                  tone: 'line-2',
                  values: points.map((p) => p.depth?.pending ?? null),
                },
                {
                  name: 'processing',
                  tone: 'line-1',
                  values: points.map((p) => p.depth?.processing ?? null),
                },
                {
                  name: 'waiting',
                  tone: 'line-4',
                  values: points.map((p) => p.depth?.waiting ?? null),
                },
              ]}
            />
          </div>
          <p class="muted chart-note">
            {range === '1h' ? 'A point a minute' : 'A point per 5 minutes'}, from{' '}
            {new Date(series.from).toLocaleTimeString()}; the last point is the minute under way.
            Recorded by the maintainer from the jobs in the database.
          </p>
        </>
      )}
    </section>
  );
}
