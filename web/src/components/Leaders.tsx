import type { LeaderView, ScheduleView } from '../types.js';
import { useState } from 'preact/hooks';
import { ago, span, until, useNow } from '../time.js';
import { TermsTimeline } from './TermsTimeline.js';

/**
 * Who leads each election (since when, with which token, how long its term has left) and what
 * each schedule last ran and runs next. Times are on the database's clock (the snapshot carries
 * it), corrected for this browser's offset; the exact instant is in each time's tooltip.
 */
export function Leaders({
  leaders,
  schedules,
  offsetMs,
}: {
  leaders: LeaderView[];
  schedules: ScheduleView[];
  offsetMs: number;
}) {
  const now = useNow(500);
  // The election whose terms are open below its table (click its name).
  const [open, setOpen] = useState<string | null>(null);
  const opened = open === null ? undefined : leaders.find((l) => l.election === open);
  return (
    <section id="leaders" aria-labelledby="leaders-title">
      <h2 id="leaders-title">Leaders &amp; schedules</h2>
      <h3 id="elections-title">Elections</h3>
      <div class="table-wrap" role="region" aria-labelledby="elections-title" tabIndex={0}>
        <table>
          <thead>
            <tr>
              <th scope="col">Election</th>
              <th scope="col">Leader</th>
              <th scope="col">Since</th>
              <th scope="col">Token</th>
              <th scope="col">Time left</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {leaders.length === 0 ? (
              <tr>
                <td colSpan={6} class="empty">
                  No elections yet
                </td>
              </tr>
            ) : (
              leaders.map((l) => (
                <tr key={l.election} data-election={l.election}>
                  <th scope="row" class="mono">
                    <button
                      type="button"
                      class="link mono"
                      aria-expanded={open === l.election}
                      title="Show this election's terms"
                      onClick={() => setOpen(open === l.election ? null : l.election)}
                    >
                      {l.election}
                    </button>
                  </th>
                  <td class="mono" data-testid="leader">
                    {l.instanceId}
                  </td>
                  <td>
                    <When iso={l.electedAt} text={ago(l.electedAt, now, offsetMs)} />
                  </td>
                  <td class="mono">{l.token}</td>
                  <td>
                    {l.state === 'active'
                      ? span(Date.parse(l.expiresAt) - (now + offsetMs))
                      : l.state === 'released'
                        ? 'stepped down'
                        : 'nobody leads'}
                  </td>
                  <td>
                    <span class={`pill ${l.state}`}>{l.state}</span>
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
      {open === null ? null : (
        <TermsTimeline
          subject={{ kind: 'election', name: open }}
          version={opened ? `${opened.token}:${opened.state}` : ''}
          offsetMs={offsetMs}
          onClose={() => setOpen(null)}
        />
      )}
      <h3 id="schedules-title">Schedules</h3>
      <div class="table-wrap" role="region" aria-labelledby="schedules-title" tabIndex={0}>
        <table>
          <thead>
            <tr>
              <th scope="col">Schedule</th>
              <th scope="col">Last slot</th>
              <th scope="col">Ran on (token)</th>
              <th scope="col">Next slot</th>
              <th scope="col">Runs</th>
            </tr>
          </thead>
          <tbody>
            {schedules.length === 0 ? (
              <tr>
                <td colSpan={5} class="empty">
                  No schedule has run yet
                </td>
              </tr>
            ) : (
              schedules.map((s) => {
                const next = s.nextSlot ? until(s.nextSlot, now, offsetMs) : '–';
                return (
                  <tr key={s.name} data-schedule={s.name}>
                    <th scope="row" class="mono">
                      {s.name}
                    </th>
                    <td>
                      <When iso={s.lastSlot} text={ago(s.lastSlot, now, offsetMs)} />
                    </td>
                    <td class="mono">
                      {s.holder}
                      {s.token === null ? null : <span class="muted"> ({s.token})</span>}
                    </td>
                    <td class={next.endsWith('overdue') ? 'overdue' : undefined}>
                      {s.nextSlot ? <When iso={s.nextSlot} text={next} /> : next}
                    </td>
                    <td>{s.runs}</td>
                  </tr>
                );
              })
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** A relative time, with the exact instant for tooltips and assistive technology. */
function When({ iso, text }: { iso: string; text: string }) {
  return (
    <time dateTime={iso} title={new Date(iso).toLocaleString()}>
      {text}
    </time>
  );
}
