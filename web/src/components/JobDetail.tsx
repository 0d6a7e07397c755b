import type { JobView } from '../types.js';

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
