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

export function JobDetail({ job, onClose }: { job: JobView; onClose: () => void }) {
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
