/**
 * The enqueue statements of the job family (postgres-enqueue.ts runs them): the dedup enqueue,
 * the plain INSERT for batches without keys, and the coalesced notification. Same conventions as
 * job-sql.ts, whose fragments they share.
 */
import { JOBS_TOPIC } from '../jobs.js';
import { CLOCK, LIVE, MS, jobColumns, notified } from './job-sql.js';

/** The enqueue input, `$1`: a jsonb array of specJson objects (postgres-enqueue.ts) as rows `i`. */
const ENQUEUE_INPUT = `jsonb_to_recordset($1::jsonb) AS i(o integer, queue text, type text, key text,
  payload jsonb, headers jsonb, partition_key text, priority integer, run_at timestamptz,
  delay_ms float8, max_attempts integer, timeout_ms integer)`;

/** The columns an enqueue writes, and their values from an input row `i` and `clock`. */
const ENQUEUE_COLUMNS = `queue, type, key, payload, headers, partition_key, priority, max_attempts,
  timeout_ms, available_at, created_at, updated_at`;
const ENQUEUE_VALUES = `i.queue, i.type, i.key, i.payload, coalesce(i.headers, '{}'::jsonb),
  i.partition_key, coalesce(i.priority, 0), i.max_attempts, i.timeout_ms,
  coalesce(i.run_at, clock.now + greatest(coalesce(i.delay_ms, 0), 0) ${MS}), clock.now, clock.now`;

/** ENQUEUE_INPUT with what a replacing enqueue adds: each row's `replace` and `debounce`. */
const REPLACING_INPUT = ENQUEUE_INPUT.replace(
  'timeout_ms integer)',
  'timeout_ms integer, replace boolean, debounce boolean)',
);

export interface EnqueueQueries {
  JobEnqueue: string;
  JobEnqueueReplacing: string;
  JobEnqueueUnkeyed: string;
  JobNotify: string;
}

export function enqueueQueries(s: string): EnqueueQueries {
  const cols = jobColumns('j');
  return {
    // $1 jsonb array of {o, queue, type, key, payload, headers, partition_key, priority, run_at,
    // delay_ms, max_attempts, timeout_ms} (keys already deduplicated), $2 now, $3 notify channel, or null
    // when the caller notifies after commit (notify-coalescer.ts).
    //
    // Ids are drawn here, in input order, so a batch's FIFO order is its id order and each
    // answer row maps back to its input exactly. A conflicting key wastes its id, harmlessly.
    // `existing` finds the live job a conflicting key met, in the statement's snapshot; a job
    // committed by a concurrent enqueue after that snapshot is invisible to it, and the caller
    // asks again for those keys (postgres-enqueue.ts).
    JobEnqueue: `${CLOCK('$2')},
      input AS MATERIALIZED (
        SELECT nextval('${s}.jobs_id_seq') AS id, i.* FROM ${ENQUEUE_INPUT} ORDER BY i.o
      ),
      inserted AS (
        INSERT INTO ${s}.jobs AS j (id, ${ENQUEUE_COLUMNS}) OVERRIDING SYSTEM VALUE
        SELECT i.id, ${ENQUEUE_VALUES} FROM input i, clock
        ORDER BY i.id
        ON CONFLICT (queue, key) WHERE key IS NOT NULL AND status IN ${LIVE} DO NOTHING
        RETURNING ${cols}
      ),
      existing AS (
        SELECT i.o, ${cols}
        FROM input i JOIN ${s}.jobs j ON j.queue = i.queue AND j.key = i.key AND j.status IN ${LIVE}
        WHERE NOT EXISTS (SELECT 1 FROM inserted n WHERE n.id = i.id)
      ),
      ${notified('$3', 'inserted', '$3::text IS NOT NULL')}
      SELECT r.* FROM (
        SELECT i.o, true AS created, ${jobColumns('n')} FROM input i JOIN inserted n ON n.id = i.id
        UNION ALL
        SELECT e.o, false AS created, ${jobColumns('e')} FROM existing e
      ) r, notified
      ORDER BY r.o, r.created DESC`,

    // JobEnqueue for a batch in which a job replaces (onConflict 'replace', debounce; decision
    // 0252); the plain JobEnqueue stays as it was. Same parameters, and each input row also says
    // `replace` and `debounce`. Keys are unique in the input (enqueue-groups.ts).
    //
    // `released`: a debounce meeting a processing job takes its key (the run goes on, keyless),
    // so the insert creates the next run. It runs before the insert (the insert's WHERE reads
    // it), and a row this statement updated no longer conflicts. The insert's DO UPDATE
    // overwrites a conflicting job only if it is pending now and its input row replaces; the
    // others are left alone and not returned, as DO NOTHING would. `written` rows map back to
    // their input by id (created) or by key (replaced). `existing` answers the rest from the
    // snapshot, as JobEnqueue does; the caller asks again for a replacing row answered there
    // with a pending job (it was claimed meanwhile) or for a debounce (postgres-enqueue.ts).
    JobEnqueueReplacing: `${CLOCK('$2')},
      input AS MATERIALIZED (
        SELECT nextval('${s}.jobs_id_seq') AS id, i.* FROM ${REPLACING_INPUT} ORDER BY i.o
      ),
      released AS (
        UPDATE ${s}.jobs j SET key = NULL, updated_at = clock.now
        FROM input i, clock
        WHERE i.debounce AND j.queue = i.queue AND j.key = i.key AND j.status = 'processing'
        RETURNING j.id
      ),
      written AS (
        INSERT INTO ${s}.jobs AS j (id, ${ENQUEUE_COLUMNS}) OVERRIDING SYSTEM VALUE
        SELECT i.id, ${ENQUEUE_VALUES} FROM input i, clock
        WHERE (SELECT count(*) FROM released) >= 0
        ORDER BY i.id
        ON CONFLICT (queue, key) WHERE key IS NOT NULL AND status IN ${LIVE} DO UPDATE SET
          type = excluded.type, payload = excluded.payload, headers = excluded.headers,
          priority = excluded.priority, max_attempts = excluded.max_attempts,
          timeout_ms = excluded.timeout_ms, available_at = excluded.available_at,
          updated_at = excluded.updated_at
        WHERE j.status = 'pending' AND excluded.id IN (SELECT r.id FROM input r WHERE r.replace)
        RETURNING ${cols}
      ),
      answered AS (
        SELECT i.o, true AS created, false AS replaced, ${jobColumns('w')}
        FROM input i JOIN written w ON w.id = i.id
        UNION ALL
        SELECT i.o, false AS created, true AS replaced, ${jobColumns('w')}
        FROM input i JOIN written w ON w.queue = i.queue AND w.key = i.key AND w.id <> i.id
      ),
      existing AS (
        SELECT i.o, false AS created, false AS replaced, ${cols}
        FROM input i JOIN ${s}.jobs j ON j.queue = i.queue AND j.key = i.key AND j.status IN ${LIVE}
        WHERE NOT EXISTS (SELECT 1 FROM answered a WHERE a.o = i.o)
      ),
      ${notified('$3', 'answered, clock', '$3::text IS NOT NULL AND (created OR available_at <= clock.now)')}
      SELECT r.*, r.created OR (r.replaced AND r.available_at <= clock.now) AS wakes FROM (
        SELECT * FROM answered UNION ALL SELECT * FROM existing
      ) r, notified, clock
      ORDER BY r.o, r.created DESC, r.replaced DESC`,

    // JobEnqueue for a batch in which no job has a key: nothing can conflict, so a plain INSERT
    // (no speculative insertion, no lookup of existing jobs). Same parameters. The identity
    // draws ids in the order the rows are inserted, which is input order, so the answer, in id
    // order, is in input order too. It returns only what the database decided (id, created_at,
    // available_at): the rest of a new job is its spec (jobs.ts newJob), and sending and
    // reading back every column of thousands of rows was a third of a bulk enqueue's time.
    JobEnqueueUnkeyed: `${CLOCK('$2')},
      inserted AS (
        INSERT INTO ${s}.jobs AS j (${ENQUEUE_COLUMNS})
        SELECT ${ENQUEUE_VALUES} FROM ${ENQUEUE_INPUT}, clock
        ORDER BY i.o
        RETURNING j.id, j.created_at, j.available_at, j.queue
      ),
      ${notified('$3', 'inserted', '$3::text IS NOT NULL')}
      SELECT n.id, n.created_at, n.available_at FROM inserted n, notified ORDER BY n.id`,

    // $1 notify channel, $2 queues text[] (distinct): the coalesced notification of enqueues
    // that committed without one.
    JobNotify: `SELECT count(pg_notify($1, '${JOBS_TOPIC}|' || q)) AS n FROM unnest($2::text[]) q`,
  };
}
