/**
 * Schemas of the job routes (routes/jobs.ts), among them the long poll that waits for a job to
 * finish (GET /api/jobs/:id/wait, decision 0249).
 */
import { Type } from 'typebox';

/** A child as GET /api/jobs/:id lists it (decision 0255). */
export const JobChildSchema = Type.Object(
  {
    id: Type.Integer(),
    queue: Type.String(),
    type: Type.Union([Type.String(), Type.Null()]),
    status: Type.String(),
    parentPolicy: Type.String(),
  },
  { additionalProperties: false },
);

/** How many children GET /api/jobs/:id lists (`childCount` counts them all). */
export const JOB_CHILDREN_SHOWN = 100;

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);
const instant = Type.String({ format: 'date-time' });

/** A job as every job route answers it (serialize.ts, jobJson): each field named and typed. */
export const JobSchema = Type.Object(
  {
    id: Type.Integer(),
    queue: Type.String(),
    type: nullable(Type.String()),
    key: nullable(Type.String()),
    payload: Type.Unknown({ description: 'The JSON payload as enqueued.' }),
    headers: Type.Record(Type.String(), Type.String()),
    partitionKey: nullable(Type.String()),
    priority: Type.Integer(),
    status: Type.String({
      description: 'waiting, pending, processing, completed, dead or cancelled.',
    }),
    attempts: Type.Integer(),
    maxAttempts: Type.Integer(),
    availableAt: instant,
    claimedBy: nullable(Type.String()),
    claimedAt: nullable(instant),
    leaseExpiresAt: nullable(instant),
    generation: Type.Integer({ description: "The latest claim's fencing token." }),
    result: Type.Unknown({ description: 'What the handler answered (JSON), or null.' }),
    lastError: nullable(Type.String()),
    errors: Type.Array(
      Type.Object({
        attempt: Type.Integer(),
        at: instant,
        error: Type.String(),
        worker: Type.Optional(nullable(Type.String({ description: 'Whose claim failed.' }))),
        token: Type.Optional(Type.Integer({ description: "The failed claim's fencing token." })),
        renewals: Type.Optional(Type.Integer({ description: 'How often that claim was renewed.' })),
      }),
      { description: 'The newest failed attempts, each with its error (and stack).' },
    ),
    createdAt: instant,
    updatedAt: instant,
    finishedAt: nullable(instant),
    timeoutMs: nullable(Type.Integer()),
    renewals: Type.Integer({ description: 'How often the latest claim was renewed.' }),
    renewedAt: nullable(instant),
    parentId: Type.Optional(
      Type.Union([Type.Integer(), Type.Null()], {
        description: 'The flow parent this job is a child of; null outside a flow or for a root.',
      }),
    ),
    children: Type.Optional(
      Type.Array(JobChildSchema, {
        description: `GET /api/jobs/:id only: the first ${JOB_CHILDREN_SHOWN} direct children of a flow's parent, in enqueue order.`,
      }),
    ),
    childCount: Type.Optional(
      Type.Integer({ description: 'GET /api/jobs/:id only: how many direct children in all.' }),
    ),
    progress: Type.Union(
      [
        Type.Number({ minimum: 0, maximum: 100 }),
        Type.Object({}, { additionalProperties: true }),
        Type.Null(),
      ],
      {
        description:
          'What the latest attempt last reported with ctx.progress: a percentage, a JSON object, or null.',
      },
    ),
  },
  { additionalProperties: true, description: 'A job (see the Job type).' },
);

/** GET /api/jobs/:id: the job and its recorded steps (decision 0254). */
export const JobDetailSchema = Type.Object(
  {
    ...JobSchema.properties,
    steps: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          value: Type.Unknown({ description: "The step's recorded answer (JSON)." }),
          generation: Type.Integer({ description: 'The generation of the run that recorded it.' }),
          recordedAt: Type.String({ format: 'date-time' }),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'The steps the job recorded with ctx.step and ctx.sleep (a sleep: its wake-up instant), in recording order.',
      },
    ),
  },
  { additionalProperties: true, description: 'A job (see the Job type) with its recorded steps.' },
);

/** The longest one long poll waits; a longer `timeout` is cut to it (the client asks again). */
export const JOB_WAIT_MAX_MS = 30_000;

export const JobWaitQuery = Type.Object(
  {
    timeout: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 32,
        description: `How long to wait: milliseconds ("2500") or a duration ("10s"); at least 0, cut to ${JOB_WAIT_MAX_MS} ms. Default: ${JOB_WAIT_MAX_MS} ms.`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const JobWaitAnswer = Type.Object(
  {
    done: Type.Boolean({
      description:
        'True when the job is finished (completed, dead or cancelled); false when the wait ended first: ask again.',
    }),
    job: JobSchema,
  },
  { additionalProperties: false },
);
