/**
 * The job explorer (issue 30 parts 2 and 3, decision 0266): a filter form, one keyset page of
 * matching jobs at a time with an approximate total, checkboxes, and actions on the checked
 * jobs or on every job matching the filter, each confirmed first. The filter and the open job
 * live in the address (`#jobs?…`, `#job/123`), so a reload or a shared link restores them.
 * Results are read when the filter or page changes and after an action, not on every snapshot:
 * a search reads up to 20,000 rows, too many to repeat each second.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import {
  filterHash,
  parseHash,
  searchQuery,
  toParams,
  type ExplorerFilter,
} from '../explorer-url.js';
import type { JobSearchView, JobView, SelectionView, Snapshot } from '../types.js';
import { JobDetail } from './JobDetail.js';

const STATUSES = ['waiting', 'pending', 'processing', 'completed', 'dead', 'cancelled'];
const PAGE_SIZE = 25;
type Action = 'retry' | 'cancel' | 'delete';
/** The statuses each action applies to (src/queue/bulk-operations.ts, BULK_STATUSES). */
const APPLIES: Record<Action, string[]> = {
  retry: ['completed', 'dead', 'cancelled'],
  cancel: ['waiting', 'pending', 'processing'],
  delete: ['waiting', 'pending', 'completed', 'dead', 'cancelled'],
};
const LABEL: Record<Action, string> = { retry: 'Retry', cancel: 'Cancel', delete: 'Delete' };

/** A confirmation waiting for the operator: what will be done, to what. */
interface Pending {
  action: Action;
  scope: 'selection' | 'filter';
  message: string;
}

/** `2024-05-01T10:00:00.000Z` as a datetime-local input shows it, in the browser's zone. */
function toLocalInput(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

function fromLocalInput(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function describeFilter(filter: ExplorerFilter): string {
  const parts = [...toParams(filter).entries()]
    .filter(([k]) => k !== 'order')
    .map(([k, v]) => `${k} ${v}`);
  return parts.length === 0 ? 'no filter' : parts.join(', ');
}

function preview(payload: unknown): string {
  const text = JSON.stringify(payload) ?? '';
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

function initialFilter(): ExplorerFilter {
  const route = parseHash(location.hash);
  return route.kind === 'filter' ? route.filter : {};
}

export function JobExplorer({
  snapshot,
  onError,
}: {
  snapshot: Snapshot;
  onError: (message: string) => void;
}) {
  const [filter, setFilter] = useState<ExplorerFilter>(initialFilter);
  const [draft, setDraft] = useState<ExplorerFilter>(filter);
  /** The cursors of the pages before this one (undefined: the first page). */
  const [cursors, setCursors] = useState<(number | undefined)[]>([undefined]);
  const [page, setPage] = useState<JobSearchView | null>(null);
  const [checked, setChecked] = useState<Set<number>>(new Set());
  const [pending, setPending] = useState<Pending | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const [reload, setReload] = useState(0);
  const [openId, setOpenId] = useState<number | null>(() => {
    const route = parseHash(location.hash);
    return route.kind === 'job' ? route.id : null;
  });
  const [detail, setDetail] = useState<JobView | null>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const section = useRef<HTMLElement>(null);

  // The address drives the explorer: a filter link sets the filter, a job link opens the job.
  useEffect(() => {
    const follow = (): void => {
      const route = parseHash(location.hash);
      if (route.kind === 'filter') {
        setFilter(route.filter);
        setDraft(route.filter);
        setCursors([undefined]);
        setOpenId(null);
      } else if (route.kind === 'job') setOpenId(route.id);
      if (route.kind !== 'other') section.current?.scrollIntoView();
    };
    addEventListener('hashchange', follow);
    if (parseHash(location.hash).kind !== 'other') section.current?.scrollIntoView();
    return () => removeEventListener('hashchange', follow);
  }, []);

  const cursor = cursors[cursors.length - 1];
  useEffect(() => {
    api<JobSearchView>('GET', `/api/jobs/search?${searchQuery(filter, PAGE_SIZE, cursor)}`)
      .then((answer) => {
        setPage(answer);
        setChecked(new Set());
      })
      .catch((error: Error) => onError(error.message));
  }, [filter, cursor, reload]);

  // The open job, read again with each snapshot (its progress and status move).
  useEffect(() => {
    if (openId === null) return setDetail(null);
    api<JobView>('GET', `/api/jobs/${openId}`)
      .then((job) => setDetail(job))
      .catch((error: Error) => {
        setDetail(null);
        onError(error.message);
      });
  }, [openId, snapshot.at]);

  useEffect(() => {
    if (pending) dialog.current?.showModal?.();
    else dialog.current?.close?.();
  }, [pending]);

  const apply = (event: Event): void => {
    event.preventDefault();
    location.hash = filterHash(draft); // the hashchange handler sets the filter
  };
  const openJob = (id: number): void => {
    location.hash = `#job/${id}`;
  };
  const closeJob = (): void => {
    setOpenId(null);
    history.replaceState(null, '', filterHash(filter));
  };

  const queues = [
    ...new Set([...snapshot.jobs.map((j) => j.queue), ...snapshot.queues.map((q) => q.queue)]),
  ].sort();
  const jobs = page?.jobs ?? [];
  const allChecked = jobs.length > 0 && jobs.every((j) => checked.has(j.id));
  const toggle = (id: number): void =>
    setChecked((set) => {
      const next = new Set(set);
      if (!next.delete(id)) next.add(id);
      return next;
    });

  /** The statuses an action on the whole filter names: the filter's, narrowed to those it applies to. */
  const filterStatuses = (action: Action): string[] =>
    (filter.status?.length ? filter.status : APPLIES[action]).filter((s) =>
      APPLIES[action].includes(s),
    );
  // The queue routes act on one queue and know no payload text (decision 0250).
  const filterActionRefusal = (action: Action): string | null =>
    !filter.queue
      ? 'choose a queue'
      : filter.text
        ? 'not with a payload text filter'
        : filterStatuses(action).length === 0
          ? `${action} applies to none of the filter's statuses`
          : null;

  const total = page ? `${page.totalExact ? '' : 'about '}${page.total}` : '…';

  const ask = (action: Action, scope: 'selection' | 'filter'): void => {
    const message =
      scope === 'selection'
        ? `${LABEL[action]} ${checked.size} selected ${checked.size === 1 ? 'job' : 'jobs'}?`
        : `${LABEL[action]} every ${filterStatuses(action).join('/')} job matching ${describeFilter({ ...filter, status: filterStatuses(action) })} (${total} match the filter now)?`;
    setPending({ action, scope, message });
  };

  const run = async ({ action, scope }: Pending): Promise<void> => {
    setPending(null);
    try {
      if (scope === 'selection') {
        const answer = await api<SelectionView>('POST', `/api/jobs/selection/${action}`, {
          ids: [...checked],
        });
        const refused = answer.results.filter((r) => r.outcome === 'refused').length;
        const missing = answer.results.filter((r) => r.outcome === 'not_found').length;
        setOutcome(
          `${LABEL[action]}: ${answer.done} done` +
            (refused ? `, ${refused} refused (wrong status)` : '') +
            (missing ? `, ${missing} not found` : ''),
        );
      } else {
        const queue = encodeURIComponent(filter.queue!);
        const body = {
          status: filterStatuses(action),
          ...(filter.type ? { type: filter.type } : {}),
          ...(filter.key ? { key: filter.key } : {}),
          ...(filter.partitionKey ? { partitionKey: filter.partitionKey } : {}),
          ...(filter.from ? { createdSince: filter.from } : {}),
          ...(filter.to ? { createdBefore: filter.to } : {}),
        };
        const answer =
          action === 'delete'
            ? await api<{ changed: number }>(
                'DELETE',
                `/api/queues/${queue}/jobs?${new URLSearchParams({ ...body, status: body.status.join(',') })}`,
              )
            : await api<{ changed: number }>('POST', `/api/queues/${queue}/jobs/${action}`, body);
        setOutcome(`${LABEL[action]}: ${answer.changed} jobs matching the filter`);
      }
    } catch (error) {
      onError((error as Error).message);
    }
    setReload((n) => n + 1);
  };

  const field = (name: 'type' | 'key' | 'partitionKey' | 'text', label: string) => (
    <label>
      {label}
      <input
        type="search"
        name={name}
        value={draft[name] ?? ''}
        onInput={(e) => setDraft({ ...draft, [name]: e.currentTarget.value || undefined })}
      />
    </label>
  );

  return (
    <section id="explorer" aria-labelledby="explorer-title" ref={section}>
      <h2 id="explorer-title">Job explorer</h2>
      <form class="filters" onSubmit={apply} aria-label="Job filter">
        <label>
          Queue
          <select
            name="queue"
            value={draft.queue ?? ''}
            onChange={(e) => setDraft({ ...draft, queue: e.currentTarget.value || undefined })}
          >
            <option value="">any</option>
            {[...new Set([...queues, ...(draft.queue ? [draft.queue] : [])])].map((q) => (
              <option key={q} value={q}>
                {q}
              </option>
            ))}
          </select>
        </label>
        <fieldset>
          <legend>Status</legend>
          {STATUSES.map((s) => (
            <label key={s} class="check">
              <input
                type="checkbox"
                name="status"
                value={s}
                checked={draft.status?.includes(s) ?? false}
                onChange={(e) => {
                  const rest = (draft.status ?? []).filter((x) => x !== s);
                  const status = e.currentTarget.checked ? [...rest, s] : rest;
                  setDraft({ ...draft, status: status.length ? status : undefined });
                }}
              />
              {s}
            </label>
          ))}
        </fieldset>
        {field('type', 'Type')}
        {field('key', 'Key')}
        {field('partitionKey', 'Partition key')}
        {field('text', 'Text in payload')}
        <label>
          Created from
          <input
            type="datetime-local"
            name="from"
            value={toLocalInput(draft.from)}
            onInput={(e) => setDraft({ ...draft, from: fromLocalInput(e.currentTarget.value) })}
          />
        </label>
        <label>
          Created before
          <input
            type="datetime-local"
            name="to"
            value={toLocalInput(draft.to)}
            onInput={(e) => setDraft({ ...draft, to: fromLocalInput(e.currentTarget.value) })}
          />
        </label>
        <label>
          Sort
          <select
            name="order"
            value={draft.order ?? 'newest'}
            onChange={(e) =>
              setDraft({
                ...draft,
                order: e.currentTarget.value === 'oldest' ? 'oldest' : undefined,
              })
            }
          >
            <option value="newest">newest first</option>
            <option value="oldest">oldest first</option>
          </select>
        </label>
        <div class="actions">
          <button type="submit">Search</button>
          <button type="button" onClick={() => (location.hash = filterHash({}))}>
            Clear
          </button>
        </div>
      </form>

      <div class="section-head">
        <p data-testid="explorer-total" role="status">
          {total} {page?.total === 1 && page.totalExact ? 'job matches' : 'jobs match'}{' '}
          <span class="muted">({describeFilter(filter)})</span>
        </p>
        <div class="actions">
          <button type="button" onClick={() => setReload((n) => n + 1)}>
            Refresh
          </button>
          <button
            type="button"
            disabled={cursors.length <= 1}
            onClick={() => setCursors((c) => c.slice(0, -1))}
          >
            Previous page
          </button>
          <button
            type="button"
            disabled={!page || page.next === null}
            onClick={() => page?.next != null && setCursors((c) => [...c, page.next!])}
          >
            Next page
          </button>
        </div>
      </div>

      <div class="actions bulk" role="group" aria-label="Actions">
        {(['retry', 'cancel', 'delete'] as const).map((action) => (
          <button
            key={`s-${action}`}
            type="button"
            class={action === 'delete' ? 'danger' : ''}
            disabled={checked.size === 0}
            onClick={() => ask(action, 'selection')}
          >
            {LABEL[action]} selected ({checked.size})
          </button>
        ))}
        {(['retry', 'cancel', 'delete'] as const).map((action) => {
          const refusal = filterActionRefusal(action);
          return (
            <button
              key={`f-${action}`}
              type="button"
              class={action === 'delete' ? 'danger' : ''}
              disabled={refusal !== null}
              title={refusal ?? undefined}
              onClick={() => ask(action, 'filter')}
            >
              {LABEL[action]} all matching
            </button>
          );
        })}
      </div>
      {outcome ? (
        <p role="status" data-testid="explorer-outcome">
          {outcome}
        </p>
      ) : null}

      <div class="table-wrap" tabIndex={0} aria-label="Matching jobs">
        <table data-testid="explorer-jobs">
          <thead>
            <tr>
              <th scope="col">
                <input
                  type="checkbox"
                  aria-label="Select every job on this page"
                  checked={allChecked}
                  onChange={() =>
                    setChecked(allChecked ? new Set() : new Set(jobs.map((j) => j.id)))
                  }
                />
              </th>
              <th scope="col">Id</th>
              <th scope="col">Queue</th>
              <th scope="col">Type</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Created</th>
              <th scope="col">Payload</th>
            </tr>
          </thead>
          <tbody>
            {jobs.length === 0 ? (
              <tr>
                <td colSpan={8} class="empty">
                  {page && page.next !== null
                    ? 'No match among the jobs this page read: Next page reads on.'
                    : 'No matching jobs'}
                </td>
              </tr>
            ) : (
              jobs.map((job) => (
                <tr key={job.id} data-job={job.id}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Select job ${job.id}`}
                      checked={checked.has(job.id)}
                      onChange={() => toggle(job.id)}
                    />
                  </td>
                  <td>
                    <a class="mono" href={`#job/${job.id}`} onClick={() => openJob(job.id)}>
                      #{job.id}
                    </a>
                  </td>
                  <td class="mono">{job.queue}</td>
                  <td class="mono">{job.type ?? '–'}</td>
                  <td>
                    <span class={`pill ${job.status}`}>{job.status}</span>
                  </td>
                  <td>
                    {job.attempts}/{job.maxAttempts}
                  </td>
                  <td>{job.createdAt.replace('T', ' ').slice(0, 19)}</td>
                  <td class="mono">{preview(job.payload)}</td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>

      <dialog ref={dialog} aria-labelledby="confirm-title" onClose={() => setPending(null)}>
        {pending ? (
          <form method="dialog" onSubmit={(e) => e.preventDefault()}>
            <h3 id="confirm-title">Confirm</h3>
            <p data-testid="confirm-message">{pending.message}</p>
            <div class="actions">
              <button
                type="button"
                class={pending.action === 'delete' ? 'danger' : ''}
                onClick={() => void run(pending)}
              >
                {LABEL[pending.action]}
              </button>
              <button type="button" onClick={() => setPending(null)}>
                Keep them
              </button>
            </div>
          </form>
        ) : null}
      </dialog>

      {detail ? <JobDetail job={detail} onClose={closeJob} onOpen={openJob} /> : null}
    </section>
  );
}
