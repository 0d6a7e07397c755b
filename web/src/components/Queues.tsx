/**
 * Queues (issue 30 part 4): each queue's depth by status, its last minute's throughput and
 * pickup latency (from the trends the maintainer records, decision 0265), paused state and
 * limits, with pause/resume and a settings form. Paused state and limits come from the
 * snapshot, so every open tab shows a change within a second; the tab that made it shows the
 * service's answer at once.
 */
import { useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { useTrends } from '../trends.js';
import type { QueueSettingsView, Snapshot, TrendMinuteView } from '../types.js';
import { limitsText, perText } from '../queue-limits.js';
import { useQueueSettings } from '../queue-settings.js';

/** A queue's newest trend minute older than this is not "the last minute" any more. */
const RECENT_MS = 2 * 60_000;

type Field = 'concurrency' | 'perKeyConcurrency' | 'rateLimit' | 'ratePer' | 'fairness';

/** Where the service's `invalid_argument` message points: `body.rate.per: …` → `ratePer`. */
function fieldOf(message: string): { field: Field | null; reason: string } {
  const match = /^(?:body\.)?([A-Za-z.]+): (.*)$/s.exec(message);
  const path = match?.[1] ?? '';
  const fields: Record<string, Field> = {
    concurrency: 'concurrency',
    perKeyConcurrency: 'perKeyConcurrency',
    rate: 'rateLimit',
    'rate.limit': 'rateLimit',
    'rate.per': 'ratePer',
    fairness: 'fairness',
  };
  return { field: fields[path] ?? null, reason: match?.[2] ?? message };
}

/** A typed value as JSON would carry it: blank is null (no limit), digits a number, else text. */
function cap(text: string): number | string | null {
  const t = text.trim();
  if (t === '') return null;
  return /^-?\d+$/.test(t) ? Number(t) : t;
}

const latency = (v: number | null) => (v === null ? '–' : `${Math.round(v)} ms`);

export function Queues({
  snapshot,
  onError,
}: {
  snapshot: Snapshot;
  onError: (message: string) => void;
}) {
  const trends = useTrends('1h', null, snapshot.at, onError);
  const [editing, setEditing] = useState<string | null>(null);
  const { queues, settingsOf, answered, toggle, countOf } = useQueueSettings(snapshot, onError);
  const recentOf = (queue: string): TrendMinuteView | undefined => {
    const row = trends?.latest.find((r) => r.queue === queue);
    const now = Date.parse(snapshot.databaseTime);
    return row && now - Date.parse(row.minute) < RECENT_MS ? row : undefined;
  };
  return (
    <section id="queues" aria-labelledby="queues-title">
      <h2 id="queues-title">Queues</h2>
      <div class="table-wrap" role="region" aria-labelledby="queues-title" tabIndex={0}>
        <table>
          <thead>
            <tr>
              <th scope="col">Queue</th>
              <th scope="col">Pending</th>
              <th scope="col">Processing</th>
              <th scope="col">Waiting</th>
              <th scope="col">Done last min</th>
              <th scope="col">Failed last min</th>
              <th scope="col">Pickup p50 / p99</th>
              <th scope="col">State</th>
              <th scope="col">Limits</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {queues.length === 0 ? (
              <tr>
                <td colSpan={10} class="empty">
                  No queues yet
                </td>
              </tr>
            ) : (
              queues.map((queue) => {
                const settings = settingsOf(queue);
                const paused = settings?.paused ?? false;
                const recent = recentOf(queue);
                return (
                  <tr key={queue} data-queue-row={queue}>
                    <th scope="row" class="mono">
                      {queue}
                    </th>
                    <td>{countOf(queue, 'pending')}</td>
                    <td>{countOf(queue, 'processing')}</td>
                    <td>{countOf(queue, 'waiting')}</td>
                    <td data-testid="queue-completed">{recent?.completed ?? 0}</td>
                    <td>{(recent?.failed ?? 0) + (recent?.dead ?? 0)}</td>
                    <td>
                      {latency(recent?.pickupP50Ms ?? null)} /{' '}
                      {latency(recent?.pickupP99Ms ?? null)}
                    </td>
                    <td>
                      <span
                        class={`pill ${paused ? 'stopped' : 'active'}`}
                        data-testid="queue-paused"
                      >
                        {paused ? 'paused' : 'running'}
                      </span>
                    </td>
                    <td data-testid="queue-settings">{limitsText(settings)}</td>
                    <td class="actions">
                      <button
                        type="button"
                        aria-label={`${paused ? 'Resume' : 'Pause'} ${queue}`}
                        onClick={() => void toggle(queue, paused ? 'resume' : 'pause')}
                      >
                        {paused ? 'Resume' : 'Pause'}
                      </button>
                      <button
                        type="button"
                        aria-expanded={editing === queue}
                        aria-label={`Settings of ${queue}`}
                        onClick={() => setEditing(editing === queue ? null : queue)}
                      >
                        Settings
                      </button>
                    </td>
                  </tr>
                );
              })
            )}
          </tbody>
        </table>
      </div>
      {editing ? (
        <SettingsForm
          key={editing}
          queue={editing}
          settings={settingsOf(editing)}
          onSaved={answered}
          onClose={() => setEditing(null)}
        />
      ) : null}
    </section>
  );
}

function SettingsForm({
  queue,
  settings,
  onSaved,
  onClose,
}: {
  queue: string;
  settings: QueueSettingsView | undefined;
  onSaved: (settings: QueueSettingsView) => void;
  onClose: () => void;
}) {
  const [values, setValues] = useState<Record<Field, string>>(() => ({
    concurrency: settings?.concurrency?.toString() ?? '',
    perKeyConcurrency:
      settings === undefined ? '1' : (settings.perKeyConcurrency?.toString() ?? ''),
    rateLimit: settings?.rate?.limit.toString() ?? '',
    ratePer: settings?.rate ? perText(settings.rate.per) : '',
    fairness: settings?.fairness ?? 'oldest',
  }));
  const [errors, setErrors] = useState<Partial<Record<Field | 'form', string>>>({});
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const set = (field: Field) => (e: Event) => {
    setValues((v) => ({ ...v, [field]: (e.target as HTMLInputElement).value }));
    setSaved(false);
  };

  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    setBusy(true);
    setErrors({});
    setSaved(false);
    const rate =
      values.rateLimit.trim() === '' && values.ratePer.trim() === ''
        ? null
        : { limit: cap(values.rateLimit), per: cap(values.ratePer) };
    try {
      const answer = await api<QueueSettingsView>(
        'PUT',
        `/api/queues/${encodeURIComponent(queue)}/settings`,
        {
          concurrency: cap(values.concurrency),
          perKeyConcurrency: cap(values.perKeyConcurrency),
          rate,
          fairness: values.fairness,
        },
      );
      onSaved(answer);
      setSaved(true);
    } catch (error) {
      const message = (error as Error).message;
      if (error instanceof ApiError && error.code === 'invalid_argument') {
        const { field, reason } = fieldOf(message);
        setErrors(field ? { [field]: reason } : { form: message });
      } else setErrors({ form: message });
    } finally {
      setBusy(false);
    }
  };

  const input = (field: Exclude<Field, 'fairness'>, label: string, hint: string) => (
    <div class="field">
      <label for={`qs-${field}`}>{label}</label>
      <input
        id={`qs-${field}`}
        name={field}
        type="text"
        inputMode={field === 'ratePer' ? 'text' : 'numeric'}
        value={values[field]}
        onInput={set(field)}
        aria-invalid={errors[field] ? true : undefined}
        aria-describedby={`qs-${field}-hint${errors[field] ? ` qs-${field}-error` : ''}`}
      />
      <span id={`qs-${field}-hint`} class="muted hint">
        {hint}
      </span>
      {errors[field] ? (
        <span id={`qs-${field}-error`} class="error-text" data-testid={`error-${field}`}>
          {errors[field]}
        </span>
      ) : null}
    </div>
  );

  return (
    <form class="settings-form" aria-labelledby="qs-title" onSubmit={(e) => void submit(e)}>
      <h3 id="qs-title">
        Settings of <span class="mono">{queue}</span>
      </h3>
      <div class="fields">
        {input('concurrency', 'Concurrency', 'Jobs at once across workers; blank: no cap')}
        {input('perKeyConcurrency', 'Per key', 'Jobs at once per partition key; blank: no cap')}
        {input('rateLimit', 'Rate limit', 'Starts per window; blank: no rate')}
        {input('ratePer', 'Rate window', 'e.g. 1s, 5m, or milliseconds')}
        <div class="field">
          <label for="qs-fairness">Fairness</label>
          <select
            id="qs-fairness"
            name="fairness"
            value={values.fairness}
            onChange={set('fairness')}
          >
            <option value="oldest">oldest first</option>
            <option value="key">round robin by key</option>
          </select>
          {errors.fairness ? (
            <span class="error-text" data-testid="error-fairness">
              {errors.fairness}
            </span>
          ) : null}
        </div>
      </div>
      {errors.form ? (
        <p class="error-text" role="alert">
          {errors.form}
        </p>
      ) : null}
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Save settings
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
        <span role="status" class="muted" data-testid="settings-status">
          {saved ? 'Saved' : ''}
        </span>
      </div>
    </form>
  );
}
