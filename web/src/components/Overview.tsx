import type { Snapshot } from '../types.js';
import { Sparkline } from './Sparkline.js';

function count(s: Snapshot, status: string): number {
  return s.jobs.filter((j) => j.status === status).reduce((sum, j) => sum + j.count, 0);
}

export function Overview({ snapshot, throughput }: { snapshot: Snapshot; throughput: number[] }) {
  const leases = snapshot.leases;
  const workers = snapshot.workers;
  const perSecond = throughput.length ? throughput[throughput.length - 1]! : 0;
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
          <div class="value">{perSecond.toFixed(1)}/s</div>
          <div class="label">
            Completed per second, last {Math.round(throughput.length / 60) || 1} min
          </div>
          <Sparkline values={throughput} label="jobs completed per second" />
        </div>
      </div>
    </section>
  );
}
