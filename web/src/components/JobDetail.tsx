import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { jobTimeline, splitError } from '../job-timeline.js';
import type { ExplanationView, JobView } from '../types.js';

/** A percentage as a bar; an object as its JSON. */
function Progress({ value }: { value: JobView['progress'] }) {
  if (value === null) return <span class="muted">–</span>;
  if (typeof value === 'number') {
    const shown = `${Math.round(value * 10) / 10}%`;
    return (
      <div
        class="bar"
        role="progressbar"
        aria-label="job progress"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={value}
      >
        <div class="fill" style={{ width: `${value}%` }} />
        <span>{shown}</span>
      </div>
    );
  }
  return <pre>{JSON.stringify(value, null, 2)}</pre>;
}

/** A flow's tree around the job (decision 0255): its parent, and its children with status. */
function Flow({ job, onOpen }: { job: JobView; onOpen: (id: number) => void }) {
  const children = job.children ?? [];
  const count = job.childCount ?? children.length;
  if ((job.parentId ?? null) === null && count === 0) return null;
  return (
    <>
      <h4>Flow</h4>
      {job.parentId != null ? (
        <p>
          Child of{' '}
          <button type="button" class="link mono" onClick={() => onOpen(job.parentId!)}>
            #{job.parentId}
          </button>
        </p>
      ) : null}
      {count > 0 ? (
        <table data-testid="job-children">
          <caption>
            {count} {count === 1 ? 'child' : 'children'}
            {count > children.length ? ` (the first ${children.length} shown)` : ''}
          </caption>
          <thead>
            <tr>
              <th scope="col">Job</th>
              <th scope="col">Queue</th>
              <th scope="col">Status</th>
              <th scope="col">On failure</th>
            </tr>
          </thead>
          <tbody>
            {children.map((c) => (
              <tr key={c.id}>
                <td>
                  <button type="button" class="link mono" onClick={() => onOpen(c.id)}>
                    #{c.id}
                  </button>
                </td>
                <td class="mono">{c.queue}</td>
                <td>
                  <span class={`pill ${c.status}`}>{c.status}</span>
                </td>
                <td class="mono">{c.parentPolicy}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

/** The explain API's answer in words (docs/queue.md, "Why isn't it running?"). */
function explanationText(e: ExplanationView): string {
  switch (e.reason) {
    case 'ready':
      return 'It is ready: the next claim of a worker of its queue takes it.';
    case 'scheduled':
      return `It is scheduled to run at ${e.until ?? '?'}.`;
    case 'backoff':
      return `It waits out its retry backoff until ${e.until ?? '?'}.`;
    case 'paused':
      return 'Its queue is paused.';
    case 'partition':
      return `It waits behind job #${e.behind ?? '?'} of its partition key.`;
    case 'concurrency':
      return `Its queue is at its concurrency limit (${e.inFlight ?? '?'} of ${e.limit ?? '?'} in flight).`;
    case 'rate':
      return `Its queue's rate limit allows the next start at ${e.nextSlotAt ?? '?'}.`;
    case 'no-worker':
      return 'No live worker lists its queue.';
    case 'children':
      return `It waits for ${e.unfinished ?? '?'} of its flow's children to finish.`;
    case 'not-pending':
      return `It is ${e.status ?? 'not pending'}.`;
    default:
      return e.reason;
  }
}

/** "Why isn't it running?": the explain API's first reason, for a job that waits. */
function WhyNotRunning({ job }: { job: JobView }) {
  const [answer, setAnswer] = useState<ExplanationView | string | null>(null);
  const waits = job.status === 'pending' || job.status === 'waiting';
  useEffect(() => {
    if (!waits) return;
    api<ExplanationView>('GET', `/api/jobs/${job.id}/explain`)
      .then(setAnswer)
      .catch((error: Error) => setAnswer(error.message));
  }, [job.id, job.status, job.availableAt, waits]);
  if (!waits) return null;
  return (
    <>
      <h4>Why isn't it running?</h4>
      <p data-testid="job-explain" role="status">
        {answer === null ? (
          <span class="muted">Asking…</span>
        ) : typeof answer === 'string' ? (
          <span class="error-text">{answer}</span>
        ) : (
          <>
            <span class="pill">{answer.reason}</span> {explanationText(answer)}
          </>
        )}
      </p>
    </>
  );
}

function Timeline({ job }: { job: JobView }) {
  return (
    <ol class="timeline" data-testid="job-timeline">
      {jobTimeline(job).map((e, i) => (
        <li key={i} class={e.tone ?? ''}>
          <time dateTime={e.at}>{e.at.replace('T', ' ').replace('Z', '')}</time>{' '}
          <strong>{e.what}</strong>
          {e.detail ? <span class="mono"> {e.detail}</span> : null}
        </li>
      ))}
    </ol>
  );
}

function Steps({ job }: { job: JobView }) {
  const steps = job.steps ?? [];
  if (steps.length === 0) return null;
  return (
    <>
      <h4>Steps</h4>
      <div class="table-wrap" role="region" aria-label="Steps" tabIndex={0}>
        <table data-testid="job-steps">
          <thead>
            <tr>
              <th scope="col">Step</th>
              <th scope="col">Value</th>
              <th scope="col">Generation</th>
              <th scope="col">Recorded</th>
            </tr>
          </thead>
          <tbody>
            {steps.map((s) => (
              <tr key={s.name}>
                <td class="mono">{s.name}</td>
                <td class="mono">{JSON.stringify(s.value)}</td>
                <td>{s.generation}</td>
                <td>{s.recordedAt}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

export function JobDetail({
  job,
  onClose,
  onOpen,
}: {
  job: JobView;
  onClose: () => void;
  /** Opens another job of the flow (its parent or a child). */
  onOpen: (id: number) => void;
}) {
  return (
    <div class="detail" role="dialog" aria-label={`job ${job.id}`}>
      <div class="section-head">
        <h3>
          Job <span class="mono">#{job.id}</span>{' '}
          <span class={`pill ${job.status}`}>{job.status}</span>
        </h3>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      <dl>
        <dt>Queue</dt>
        <dd class="mono">{job.queue}</dd>
        <dt>Type</dt>
        <dd class="mono">{job.type ?? '–'}</dd>
        <dt>Key / partition</dt>
        <dd class="mono">
          {job.key ?? '–'} / {job.partitionKey ?? '–'}
        </dd>
        <dt>Attempts</dt>
        <dd>
          {job.attempts} of {job.maxAttempts} (generation {job.generation})
        </dd>
        <dt>Available at</dt>
        <dd>{job.availableAt}</dd>
        <dt>Claimed by</dt>
        <dd class="mono">
          {job.claimedBy ?? '–'}
          {job.claimedBy ? ` (token ${job.generation})` : ''}
        </dd>
        <dt>Progress</dt>
        <dd data-testid="job-progress">
          <Progress value={job.progress ?? null} />
        </dd>
      </dl>
      <WhyNotRunning job={job} />
      <h4>Timeline</h4>
      <Timeline job={job} />
      <Flow job={job} onOpen={onOpen} />
      <Steps job={job} />
      <h4>Payload</h4>
      <pre>{JSON.stringify(job.payload, null, 2)}</pre>
      <h4>Headers</h4>
      <pre>{JSON.stringify(job.headers, null, 2)}</pre>
      {job.result !== null && job.result !== undefined ? (
        <>
          <h4>Result</h4>
          <pre>{JSON.stringify(job.result, null, 2)}</pre>
        </>
      ) : null}
      <h4>Attempt history</h4>
      {job.errors.length === 0 ? (
        <p class="muted">No failed attempts.</p>
      ) : (
        <ol class="history" data-testid="job-attempts">
          {job.errors.map((e) => {
            const { message, stack } = splitError(e.error);
            return (
              <li key={`${e.attempt}-${e.at}`}>
                <span class="mono">attempt {e.attempt}</span> at {e.at}:{' '}
                <span class="error-text">{message}</span>
                {stack ? (
                  <details>
                    <summary>Stack</summary>
                    <pre>{stack}</pre>
                  </details>
                ) : null}
              </li>
            );
          })}
        </ol>
      )}
    </div>
  );
}
