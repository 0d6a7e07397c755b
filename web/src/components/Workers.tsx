import type { WorkerView } from '../types.js';
import { ago, useNow } from '../time.js';

export function Workers({ workers, offsetMs }: { workers: WorkerView[]; offsetMs: number }) {
  const now = useNow(1000);
  return (
    <section id="workers" aria-labelledby="workers-title">
      <h2 id="workers-title">Workers</h2>
      {/* Focusable: at 375 px the table scrolls sideways, and keyboard users must reach it. */}
      <div class="table-wrap" role="region" aria-labelledby="workers-title" tabIndex={0}>
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Host / pid</th>
              <th scope="col">Queues</th>
              <th scope="col">In flight</th>
              <th scope="col">Last seen</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {workers.length === 0 ? (
              <tr>
                <td colSpan={7} class="empty">
                  No workers registered
                </td>
              </tr>
            ) : (
              workers.map((w) => (
                <tr key={w.id}>
                  <td class="mono">{w.name}</td>
                  <td>{w.kind === 'http' ? 'HTTP' : 'library'}</td>
                  <td class="mono">
                    {w.host} / {w.pid}
                  </td>
                  <td>{w.queues.join(', ')}</td>
                  <td>{w.inFlight}</td>
                  <td>{ago(w.lastSeenAt, now, offsetMs)}</td>
                  <td>
                    <span class={`pill ${w.status}`}>{w.status}</span>
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}
