import { Type } from 'typebox';
import { JOB_STATUSES, QUEUE_FAIRNESS } from '../../core/types.js';
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
