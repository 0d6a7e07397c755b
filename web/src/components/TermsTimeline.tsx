import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import type { TermView } from '../types.js';

/** What a timeline is of: a lease resource, or an election. */
export interface TermsSubject {
  kind: 'lease' | 'election';
  name: string;
}

/**
 * The terms of one lease resource or election, newest first (GET …/terms): holder, token,
 * start, end, how each ended, a bar per term on a shared time axis, and each takeover (a term
 * that followed an expiry under another holder) called out. `version` changes when the
 * subject's row does (a new token, a release), and the terms are read again.
 */
export function TermsTimeline({
  subject,
  version,
  offsetMs,
  onClose,
}: {
  subject: TermsSubject;
  version: string;
  offsetMs: number;
  onClose: () => void;
}) {
  const [terms, setTerms] = useState<TermView[] | null>(null);
  const [recording, setRecording] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const path =
    subject.kind === 'lease'
      ? `/api/leases/${encodeURIComponent(subject.name)}/terms`
      : `/api/leaders/${encodeURIComponent(subject.name)}/terms`;
  useEffect(() => {
    let current = true;
    api<{ terms: TermView[]; recording?: boolean }>('GET', path)
      .then((answer) => {
        if (!current) return;
        setTerms(answer.terms);
        setRecording(answer.recording ?? true);
        setError(null);
      })
      .catch((e: unknown) => current && setError(e instanceof ApiError ? e.message : String(e)));
    return () => {
      current = false;
    };
  }, [path, version]);
  const title = `${subject.kind === 'lease' ? 'Lease' : 'Election'} ${subject.name}: terms`;
  return (
    <div class="terms" role="region" aria-label={title} data-terms-of={subject.name}>
      <div class="section-head">
        <h3>{title}</h3>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      {recording ? null : (
        <p class="muted" data-testid="recording-off">
          Lease term history is off, so only the current term is known: turn it on with{' '}
          <code>lh.leases.setTermRecording(true)</code>.
        </p>
      )}
      {error ? (
        <p class="error-text">{error}</p>
      ) : terms === null ? (
        <p class="muted">Loading…</p>
      ) : terms.length === 0 ? (
        <p class="muted">No terms recorded</p>
      ) : (
        <TermsTable terms={terms} offsetMs={offsetMs} />
      )}
    </div>
  );
}

function TermsTable({ terms, offsetMs }: { terms: TermView[]; offsetMs: number }) {
  // One time axis for every bar: from the oldest start to the newest end (or now, if held).
  const now = Date.now() + offsetMs;
  const from = Math.min(...terms.map((t) => Date.parse(t.startedAt)));
  const to = Math.max(now, ...terms.map((t) => (t.endedAt ? Date.parse(t.endedAt) : now)));
  const width = Math.max(1, to - from);
  return (
    <div class="table-wrap" role="region" aria-label="Terms" tabIndex={0}>
      <table>
        <thead>
          <tr>
            <th scope="col">Holder</th>
            <th scope="col">Token</th>
            <th scope="col">Started</th>
            <th scope="col">Ended</th>
            <th scope="col">How</th>
            <th scope="col">Timeline</th>
          </tr>
        </thead>
        <tbody>
          {terms.map((t) => {
            const start = Date.parse(t.startedAt);
            const end = t.endedAt ? Date.parse(t.endedAt) : now;
            const x = ((start - from) / width) * 100;
            const w = Math.max(0.5, ((end - start) / width) * 100);
            const how = t.ended ?? 'held';
            return (
              <tr key={t.token} data-token={t.token} class={t.takeover ? 'takeover' : undefined}>
                <td class="mono">
                  {t.holder}
                  {t.takeover ? (
                    <span class="pill takeover" title="took over after the previous term expired">
                      takeover
                    </span>
                  ) : null}
                </td>
                <td class="mono">{t.token}</td>
                <td>
                  <time dateTime={t.startedAt}>{clock(t.startedAt)}</time>
                </td>
                <td>{t.endedAt ? <time dateTime={t.endedAt}>{clock(t.endedAt)}</time> : '–'}</td>
                <td>
                  <span class={`pill ${t.ended ?? 'active'}`}>{how}</span>
                </td>
                <td>
                  <svg
                    class="term-bar"
                    viewBox="0 0 100 10"
                    preserveAspectRatio="none"
                    role="img"
                    aria-label={`${t.holder} held token ${t.token} ${how === 'held' ? 'until now' : `until it was ${how}`}`}
                  >
                    <rect class="axis" x="0" y="4.5" width="100" height="1" />
                    <rect class={`span ${t.ended ?? 'active'}`} x={x} y="1" width={w} height="8" />
                  </svg>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** A time of day with seconds, in the browser's locale: terms are often seconds apart. */
function clock(iso: string): string {
  return new Date(iso).toLocaleTimeString(undefined, {
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}
