import { useState } from 'preact/hooks';
import type { LeaseView } from '../types.js';
import { useNow } from '../time.js';
import { TermsTimeline } from './TermsTimeline.js';

type Filter = 'active' | 'expired' | 'released' | 'all';
const FILTERS: Filter[] = ['active', 'expired', 'released', 'all'];

/**
 * Leases with their time left as a shrinking bar. Time left is computed on the database's
 * clock (the snapshot carries it), corrected for this browser's clock offset.
 */
export function Leases({
  leases,
  offsetMs,
  flashes,
}: {
  leases: LeaseView[];
  offsetMs: number;
  flashes: Map<string, string>;
}) {
  const [filter, setFilter] = useState<Filter>('active');
  // The resource whose terms are open below the table (click its name).
  const [open, setOpen] = useState<string | null>(null);
  const opened = open === null ? undefined : leases.find((l) => l.resource === open);
  const now = useNow(200);
  const shown = leases.filter((l) => filter === 'all' || l.state === filter);
  return (
    <section id="leases" aria-labelledby="leases-title">
      <div class="section-head">
        <h2 id="leases-title">Leases</h2>
        <div class="segmented" role="group" aria-label="Filter leases">
          {FILTERS.map((f) => (
            <button type="button" key={f} aria-pressed={filter === f} onClick={() => setFilter(f)}>
              {f}
            </button>
          ))}
        </div>
      </div>
      <div class="table-wrap" role="region" aria-labelledby="leases-title" tabIndex={0}>
        <table>
          <thead>
            <tr>
              <th scope="col">Resource</th>
              <th scope="col">Holder</th>
              <th scope="col">Token</th>
              <th scope="col">Time left</th>
              <th scope="col">Renewals</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {shown.length === 0 ? (
              <tr>
                <td colSpan={6} class="empty">
                  No {filter === 'all' ? '' : filter} leases
                </td>
              </tr>
            ) : (
              shown.map((l) => {
                const left = Math.max(0, Date.parse(l.expiresAt) - (now + offsetMs));
                const fraction = l.state === 'active' ? Math.min(1, left / l.ttlMs) : 0;
                return (
                  <tr
                    key={l.resource}
                    class={flashes.get(l.resource) ?? ''}
                    data-resource={l.resource}
                  >
                    <td class="mono">
                      <button
                        type="button"
                        class="link mono"
                        aria-expanded={open === l.resource}
                        title="Show this lease's terms"
                        onClick={() => setOpen(open === l.resource ? null : l.resource)}
                      >
                        {l.resource}
                      </button>
                    </td>
                    <td class="mono">{l.holder}</td>
                    <td class="mono">{l.token}</td>
                    <td>
                      {l.state === 'active' ? (
                        <div
                          class="bar"
                          role="meter"
                          aria-label={`time left for ${l.resource}`}
                          aria-valuemin={0}
                          aria-valuemax={l.ttlMs}
                          aria-valuenow={Math.round(left)}
                        >
                          <div class="fill" style={{ width: `${(fraction * 100).toFixed(1)}%` }} />
                          <span>{(left / 1000).toFixed(1)}s</span>
                        </div>
                      ) : (
                        '–'
                      )}
                    </td>
                    <td>{l.renewCount}</td>
                    <td>
                      <span class={`pill ${l.state}`}>{l.state}</span>
                    </td>
                  </tr>
                );
              })
            )}
          </tbody>
        </table>
      </div>
      {open === null ? null : (
        <TermsTimeline
          subject={{ kind: 'lease', name: open }}
          version={opened ? `${opened.token}:${opened.state}` : ''}
          offsetMs={offsetMs}
          onClose={() => setOpen(null)}
        />
      )}
    </section>
  );
}
