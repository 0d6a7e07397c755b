/**
 * The dashboard. State comes from the SSE stream: a snapshot of the fleet on connect and every
 * second (from the database, so every instance shows the same), plus instant events from the
 * instance we are connected to, which make rows flash as leases are acquired, renewed, released.
 */
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { apiKey, setApiKey } from './api.js';
import { Generator } from './components/Generator.js';
import { JobExplorer } from './components/JobExplorer.js';
import { Jobs } from './components/Jobs.js';
import { Leaders } from './components/Leaders.js';
import { Leases } from './components/Leases.js';
import { Overview } from './components/Overview.js';
import { Queues } from './components/Queues.js';
import { Trends } from './components/Trends.js';
import { Workers } from './components/Workers.js';
import { connectStream } from './stream.js';
import type { LeaseView, Snapshot } from './types.js';

type Status = 'connecting' | 'live' | 'retrying' | 'unauthorized';
const HISTORY_SECONDS = 300;
const FLASH_MS = 1_200;

function completedTotal(s: Snapshot): number {
  return s.jobs.filter((j) => j.status === 'completed').reduce((sum, j) => sum + j.count, 0);
}

function App() {
  const [snapshot, setSnapshot] = useState<Snapshot | null>(null);
  const [status, setStatus] = useState<Status>('connecting');
  const [offsetMs, setOffsetMs] = useState(0);
  const [throughput, setThroughput] = useState<number[]>([]);
  const [flashes, setFlashes] = useState(new Map<string, string>());
  const [error, setError] = useState<string | null>(null);
  const [dark, setDark] = useState(
    () =>
      localStorage.getItem('leasehold.theme') === 'dark' ||
      (localStorage.getItem('leasehold.theme') === null &&
        matchMedia('(prefers-color-scheme: dark)').matches),
  );
  const previous = useRef<{ snapshot: Snapshot; receivedAt: number } | null>(null);
  const [keyVersion, setKeyVersion] = useState(0);

  const flash = (resource: string, kind: string): void => {
    setFlashes((m) => new Map(m).set(resource, `flash-${kind}`));
    setTimeout(
      () =>
        setFlashes((m) => {
          const next = new Map(m);
          next.delete(resource);
          return next;
        }),
      FLASH_MS,
    );
  };

  useEffect(() => {
    document.documentElement.dataset.theme = dark ? 'dark' : 'light';
    localStorage.setItem('leasehold.theme', dark ? 'dark' : 'light');
  }, [dark]);

  useEffect(
    () =>
      connectStream({
        onStatus: setStatus,
        onEvent: (event, data) => {
          if (event === 'snapshot') {
            const next = data as Snapshot;
            const receivedAt = Date.now();
            setOffsetMs(Date.parse(next.databaseTime) - receivedAt);
            const before = previous.current;
            if (before) {
              const seconds = Math.max(0.001, (receivedAt - before.receivedAt) / 1000);
              const rate =
                Math.max(0, completedTotal(next) - completedTotal(before.snapshot)) / seconds;
              setThroughput((h) => [...h, rate].slice(-HISTORY_SECONDS));
              // Leases that expired since the last snapshot flash too (no instance saw an event).
              const was = new Map(before.snapshot.leases.map((l) => [l.resource, l.state]));
              for (const l of next.leases)
                if (l.state === 'expired' && was.get(l.resource) === 'active')
                  flash(l.resource, 'expired');
            }
            previous.current = { snapshot: next, receivedAt };
            setSnapshot(next);
          } else if (event.startsWith('lease:')) {
            const lease = data as LeaseView;
            if (lease.resource) flash(lease.resource, event.slice(6));
            // Apply at once so the row appears within the second, before the next snapshot.
            setSnapshot((s) =>
              s
                ? {
                    ...s,
                    leases: [lease, ...s.leases.filter((l) => l.resource !== lease.resource)],
                  }
                : s,
            );
          }
        },
      }),
    [keyVersion],
  );

  const askForKey = (): void => {
    const key = prompt('API key (kept for this tab only):', apiKey() ?? '');
    if (key !== null) {
      setApiKey(key.trim() || null);
      setKeyVersion((v) => v + 1);
    }
  };

  return (
    <>
      <header>
        <h1>leasehold</h1>
        <nav aria-label="Sections">
          <a href="#overview">Overview</a>
          <a href="#leases">Leases</a>
          <a href="#leaders">Leaders</a>
          <a href="#jobs">Jobs</a>
          <a href="#explorer">Explorer</a>
          <a href="#queues">Queues</a>
          <a href="#trends">Trends</a>
          <a href="#workers">Workers</a>
          <a href="#generator">Generator</a>
        </nav>
        <span class={`status ${status}`} role="status" data-testid="connection">
          {status}
        </span>
        <button type="button" onClick={askForKey}>
          API key
        </button>
        <button type="button" aria-pressed={dark} onClick={() => setDark((d) => !d)}>
          {dark ? 'Light' : 'Dark'}
        </button>
      </header>
      {error ? (
        <div class="banner" role="alert">
          {error}{' '}
          <button type="button" onClick={() => setError(null)}>
            Dismiss
          </button>
        </div>
      ) : null}
      {status === 'unauthorized' ? (
        <main>
          <p>
            This service needs an API key with the read scope.{' '}
            <button type="button" onClick={askForKey}>
              Enter a key
            </button>
          </p>
        </main>
      ) : !snapshot ? (
        <main>
          <p class="loading">Connecting to the service…</p>
        </main>
      ) : (
        <main>
          <Overview snapshot={snapshot} throughput={throughput} />
          <Generator generator={snapshot.generator} onError={setError} />
          <Leases leases={snapshot.leases} offsetMs={offsetMs} flashes={flashes} />
          <Leaders leaders={snapshot.leaders} schedules={snapshot.schedules} offsetMs={offsetMs} />
          <Jobs snapshot={snapshot} onError={setError} />
          <JobExplorer snapshot={snapshot} onError={setError} />
          <Queues snapshot={snapshot} onError={setError} />
          <Trends snapshot={snapshot} onError={setError} />
          <Workers workers={snapshot.workers} offsetMs={offsetMs} />
        </main>
      )}
    </>
  );
}

// Preact 11 renders next to existing children: clear the no-script placeholder first.
const root = document.getElementById('app')!;
root.textContent = '';
render(<App />, root);
