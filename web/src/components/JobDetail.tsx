import type { JobView } from '../types.js';

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
        <dd class="mono">{job.claimedBy ?? '–'}</dd>
        <dt>Progress</dt>
        <dd data-testid="job-progress">
          <Progress value={job.progress ?? null} />
        </dd>
      </dl>
      <Flow job={job} onOpen={onOpen} />
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
        <ol class="history">
          {job.errors.map((e) => (
            <li key={`${e.attempt}-${e.at}`}>
              <span class="mono">attempt {e.attempt}</span> at {e.at}:{' '}
              <span class="error-text">{e.error}</span>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
