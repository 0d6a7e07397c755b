import { Type } from 'typebox';
import { JOB_STATUSES, QUEUE_FAIRNESS } from '../../core/types.js';
import { BULK_BATCH } from '../../queue/bulk-operations.js';
import { QUEUE_SETTINGS_LIMITS } from '../../queue/queue-settings.js';
import { Name } from './common.js';

const DateTime = Type.String({ format: 'date-time' });
const Fairness = Type.Union(QUEUE_FAIRNESS.map((f) => Type.Literal(f)));

export const QueueParams = Type.Object(
  { name: Name('The queue.') },
  { additionalProperties: false },
);

/** A queue's flow control as stored (the defaults for a queue never configured). */
export const QueueSettingsSchema = Type.Object({
  queue: Type.String(),
  paused: Type.Boolean({ description: 'No job of the queue starts while true.' }),
  concurrency: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Jobs in flight across every worker; null: no cap.',
  }),
  perKeyConcurrency: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Jobs in flight per partition key (default 1); null: no cap.',
  }),
  rate: Type.Union(
    [
      Type.Object({ limit: Type.Integer(), per: Type.Integer({ description: 'Milliseconds.' }) }),
      Type.Null(),
    ],
    { description: 'At most `limit` starts in any window of `per` ms; null: no rate.' },
  ),
  fairness: Fairness,
});

export const QueueOverviewSchema = Type.Object({
  ...QueueSettingsSchema.properties,
  counts: Type.Object(Object.fromEntries(JOB_STATUSES.map((s) => [s, Type.Integer()])), {
    description: "The queue's jobs by status.",
  }),
});

export const QueueList = Type.Object({ queues: Type.Array(QueueOverviewSchema) });

const Cap = (max: number, description: string) =>
  Type.Union([Type.Integer({ minimum: 1, maximum: max }), Type.Null()], { description });

/** The input of `lh.queue(name).configure()`: fields left out stay as they are. */
export const ConfigureBody = Type.Object(
  {
    concurrency: Type.Optional(
      Cap(
        QUEUE_SETTINGS_LIMITS.concurrencyMax,
        'Jobs in flight across every worker; null removes the cap.',
      ),
    ),
    perKeyConcurrency: Type.Optional(
      Cap(
        QUEUE_SETTINGS_LIMITS.perKeyConcurrencyMax,
        'Jobs in flight per partition key; null removes the cap.',
      ),
    ),
    rate: Type.Optional(
      Type.Union(
        [
          Type.Object(
            {
              limit: Type.Integer({ minimum: 1, maximum: QUEUE_SETTINGS_LIMITS.rateLimitMax }),
              per: Type.Union(
                [
                  Type.Integer({
                    minimum: QUEUE_SETTINGS_LIMITS.ratePerMinMs,
                    maximum: QUEUE_SETTINGS_LIMITS.ratePerMaxMs,
                  }),
                  Type.String({ minLength: 1, maxLength: 32 }),
                ],
                { description: "The window: milliseconds, or a duration such as '1s' or '5m'." },
              ),
            },
            { additionalProperties: false },
          ),
          Type.Null(),
        ],
        { description: 'At most `limit` starts in any window of `per`; null removes the rate.' },
      ),
    ),
    fairness: Type.Optional(Fairness),
  },
  { additionalProperties: false },
);

/** Why a job is not running: `reason`, and the fields that reason carries. */
export const ExplanationSchema = Type.Object(
  {
    reason: Type.Union(
      [
        'children',
        'not-pending',
        'scheduled',
        'backoff',
        'paused',
        'partition',
        'concurrency',
        'rate',
        'no-worker',
        'ready',
      ].map((r) => Type.Literal(r)),
    ),
    status: Type.Optional(Type.String({ description: 'not-pending: the job status.' })),
    unfinished: Type.Optional(
      Type.Integer({ description: 'children: the waiting parent’s children not yet done.' }),
    ),
    until: Type.Optional(DateTime),
    behind: Type.Optional(
      Type.Integer({ description: 'partition: the job of its key that runs or comes first.' }),
    ),
    inFlight: Type.Optional(Type.Integer()),
    limit: Type.Optional(Type.Integer()),
    nextSlotAt: Type.Optional(DateTime),
    per: Type.Optional(Type.Integer({ description: 'rate: the window in milliseconds.' })),
  },
  { description: 'The first reason that applies, in the order listed (docs/queue.md).' },
);

const Status = Type.Union(JOB_STATUSES.map((s) => Type.Literal(s)));
const Instant = (description: string) =>
  Type.String({ minLength: 1, maxLength: 64, description: `${description} ISO 8601.` });

/** The filter of an operation over many jobs (lh.queue(name).retryAll etc., decision 0250). */
const filterFields = {
  type: Type.Optional(Name('Only jobs of this type.')),
  key: Type.Optional(Name('Only jobs with this dedup key.')),
  partitionKey: Type.Optional(Name('Only jobs of this partition key.')),
  createdSince: Type.Optional(Instant('Only jobs created at or after this instant.')),
  createdBefore: Type.Optional(Instant('Only jobs created before this instant.')),
  batchSize: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: BULK_BATCH.max,
      description: `Jobs changed per statement (default ${BULK_BATCH.default}).`,
    }),
  ),
};

export const JobFilterBody = Type.Object(
  {
    status: Type.Optional(
      Type.Union([Status, Type.Array(Status, { minItems: 1, maxItems: JOB_STATUSES.length })], {
        description: 'One status or several; default: every status the operation applies to.',
      }),
    ),
    ...filterFields,
  },
  { additionalProperties: false },
);

/** The same filter in a query string (DELETE has no body): `status` is a comma-separated list. */
export const JobFilterQuery = Type.Object(
  {
    status: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'One status or several separated by commas, e.g. dead,cancelled.',
      }),
    ),
    ...filterFields,
  },
  { additionalProperties: false },
);

export const ChangedSchema = Type.Object({
  changed: Type.Integer({ description: 'How many jobs the operation changed.' }),
});
