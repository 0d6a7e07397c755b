import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import type { JobView, Snapshot } from '../types.js';
import { JobDetail } from './JobDetail.js';
import { limitsText } from '../queue-limits.js';
import { useQueueSettings } from '../queue-settings.js';

const STATUSES = ['waiting', 'pending', 'processing', 'completed', 'dead', 'cancelled'];

/** Jobs by queue and status; pick a cell to list its jobs, pick a job to see its detail. */
export function Jobs({
  snapshot,
  onError,
}: {
  snapshot: Snapshot;
  onError: (message: string) => void;
}) {
  const { queues, settingsOf, toggle, countOf } = useQueueSettings(snapshot, onError);
  const [selection, setSelection] = useState<{ queue: string; status: string } | null>(null);
  const [jobs, setJobs] = useState<JobView[]>([]);
  const [detail, setDetail] = useState<JobView | null>(null);
  const [refresh, setRefresh] = useState(0);

  useEffect(() => {
    if (!selection) return;
    const query = new URLSearchParams({
      queue: selection.queue,
      status: selection.status,
      limit: '50',
    });
    api<{ jobs: JobView[] }>('GET', `/api/jobs?${query}`)
      .then((answer) => setJobs(answer.jobs))
      .catch((error: Error) => onError(error.message));
  }, [selection?.queue, selection?.status, refresh, snapshot.at]);

  // The open job as it is now (its progress moves while it runs), read with each snapshot.
  useEffect(() => {
    if (!detail) return;
    api<JobView>('GET', `/api/jobs/${detail.id}`)
      .then((fresh) => setDetail((open) => (open?.id === fresh.id ? fresh : open)))
      .catch(() => {}); // deleted meanwhile, or a blip: the next snapshot tries again
  }, [detail?.id, snapshot.at]);

  const act = async (job: JobView, action: 'retry' | 'cancel' | 'delete'): Promise<void> => {
    try {
      if (action === 'delete') await api('DELETE', `/api/jobs/${job.id}`);
      else await api('POST', `/api/jobs/${job.id}/${action}`);
      setRefresh((n) => n + 1);
      if (detail?.id === job.id) setDetail(null);
    } catch (error) {
      onError((error as Error).message);
    }
  };

  return (
    <section id="jobs" aria-labelledby="jobs-title">
      <h2 id="jobs-title">Jobs</h2>
      <div class="table-wrap" role="region" aria-labelledby="jobs-title" tabIndex={0}>
        <table>
          <thead>
            <tr>
              <th scope="col">Queue</th>
              {STATUSES.map((s) => (
                <th scope="col" key={s}>
                  {s}
                </th>
              ))}
              <th scope="col">State</th>
              <th scope="col">Limits</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {queues.length === 0 ? (
              <tr>
                <td colSpan={STATUSES.length + 4} class="empty">
                  No jobs yet
                </td>
              </tr>
            ) : (
              queues.map((queue) => {
                const settings = settingsOf(queue);
                const paused = settings?.paused ?? false;
                return (
                  <tr key={queue} data-queue={queue}>
                    <th scope="row" class="mono">
                      {queue}
                    </th>
                    {STATUSES.map((status) => (
                      <td key={status}>
                        <button
                          type="button"
                          class="link"
                          aria-pressed={selection?.queue === queue && selection.status === status}
                          onClick={() => setSelection({ queue, status })}
                        >
                          {countOf(queue, status)}
                        </button>
                      </td>
                    ))}
                    <td>
                      <span
                        class={`pill ${paused ? 'stopped' : 'active'}`}
                        data-testid="queue-state"
                      >
                        {paused ? 'paused' : 'running'}
                      </span>
                    </td>
                    <td data-testid="queue-limits">{limitsText(settings)}</td>
                    <td class="actions">
                      <button
                        type="button"
                        aria-label={`${paused ? 'Resume' : 'Pause'} queue ${queue}`}
                        onClick={() => void toggle(queue, paused ? 'resume' : 'pause')}
                      >
                        {paused ? 'Resume' : 'Pause'}
                      </button>
                    </td>
                  </tr>
                );
              })
            )}
          </tbody>
        </table>
      </div>
      {selection ? (
        <div
          class="table-wrap"
          role="region"
          aria-label="Jobs of the chosen queue and status"
          tabIndex={0}
        >
          <h3>
            {selection.status} in <span class="mono">{selection.queue}</span>
          </h3>
          <table>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Attempts</th>
                <th scope="col">Partition</th>
                <th scope="col">Last error</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {jobs.length === 0 ? (
                <tr>
                  <td colSpan={5} class="empty">
                    None
                  </td>
                </tr>
              ) : (
                jobs.map((job) => (
                  <tr key={job.id}>
                    <td>
                      <button type="button" class="link mono" onClick={() => setDetail(job)}>
                        #{job.id}
                      </button>
                    </td>
                    <td>
                      {job.attempts}/{job.maxAttempts}
                    </td>
                    <td class="mono">{job.partitionKey ?? '–'}</td>
                    <td class="error-text">{job.lastError ?? ''}</td>
                    <td class="actions">
                      {['dead', 'cancelled', 'completed'].includes(job.status) ? (
                        <button type="button" onClick={() => void act(job, 'retry')}>
                          Retry
                        </button>
                      ) : null}
                      {['waiting', 'pending', 'processing'].includes(job.status) ? (
                        <button type="button" onClick={() => void act(job, 'cancel')}>
                          Cancel
                        </button>
                      ) : null}
                      {job.status !== 'processing' ? (
                        <button
                          type="button"
                          class="danger"
                          onClick={() => void act(job, 'delete')}
                        >
                          Delete
                        </button>
                      ) : null}
                    </td>
                  </tr>
                ))
              )}
            </tbody>
          </table>
        </div>
      ) : null}
      {detail ? (
        <JobDetail
          job={detail}
          onClose={() => setDetail(null)}
          onOpen={(id) => {
            api<JobView>('GET', `/api/jobs/${id}`)
              .then(setDetail)
              .catch((error: Error) => onError(error.message));
          }}
        />
      ) : null}
    </section>
  );
}
