import { useTrends } from '../trends.js';
import type { Snapshot, TrendSeriesView } from '../types.js';
import { Sparkline } from './Sparkline.js';

/** Live samples needed before the tile shows its own rate rather than the last minute's. */
const LIVE_SAMPLES = 10;

/** Completed per second over the last whole minute the maintainer recorded (decision 0265). */
function lastMinuteRate(series: TrendSeriesView | null): number | null {
  // The newest point is the minute under way; the one before it is whole.
  const last = series?.points[series.points.length - 2];
  return last && series ? last.completed / (60 * series.stepMinutes) : null;
}

function count(s: Snapshot, status: string): number {
  return s.jobs.filter((j) => j.status === status).reduce((sum, j) => sum + j.count, 0);
}

export function Overview({ snapshot, throughput }: { snapshot: Snapshot; throughput: number[] }) {
  const leases = snapshot.leases;
  const workers = snapshot.workers;
  // Right after the page loads there is no live history yet: the tile starts from the last
  // minute the trends table recorded instead of reading 0.0/s (issue 30).
  const seed = lastMinuteRate(useTrends('1h', null, snapshot.at, () => {}));
  const live = throughput.length >= LIVE_SAMPLES || seed === null;
  const perSecond = live ? (throughput[throughput.length - 1] ?? 0) : seed;
  const cards: [string, number, string][] = [
    ['Active leases', leases.filter((l) => l.state === 'active').length, 'ok'],
    ['Expired leases', leases.filter((l) => l.state === 'expired').length, 'warn'],
    ['Pending jobs', count(snapshot, 'pending'), ''],
    ['Processing', count(snapshot, 'processing'), 'ok'],
    ['Completed', count(snapshot, 'completed'), ''],
    ['Dead', count(snapshot, 'dead'), 'bad'],
    ['Workers alive', workers.filter((w) => w.status === 'alive').length, 'ok'],
    [
      'Draining / dead',
      workers.filter((w) => w.status === 'draining' || w.status === 'dead').length,
      'warn',
    ],
  ];
  return (
    <section id="overview" aria-labelledby="overview-title">
      <h2 id="overview-title">Overview</h2>
      <div class="cards">
        {cards.map(([label, value, tone]) => (
          <div class={`card ${tone}`} key={label}>
            <div class="value" data-testid={`card-${label.toLowerCase().replace(/[^a-z]+/g, '-')}`}>
              {value}
            </div>
            <div class="label">{label}</div>
          </div>
        ))}
        <div class="card wide">
          <div class="value" data-testid="card-throughput">
            {perSecond.toFixed(1)}/s
          </div>
          <div class="label">
            {live
              ? `Completed per second, last ${Math.round(throughput.length / 60) || 1} min`
              : 'Completed per second in the last recorded minute'}
          </div>
          <Sparkline values={throughput} label="jobs completed per second" />
        </div>
      </div>
    </section>
  );
}
