/**
 * The task routes of the seed's API, on the queue engine: a task is a job of the `tasks` queue,
 * so next/heartbeat/complete carry the job's fencing guarantees. Heartbeat (renew), complete,
 * fail and hand-back are guarded by the worker id (the body's `processor`, the seed's wire
 * name) AND the job's fencing token (its generation, the body's `token`; clients that send
 * none are matched to the current generation of their own claim). A refusal says why: 404 unknown task,
 * 409 task_done (already finished), 409 lease_lost (the claim expired or moved on).
 */
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import {
  InvalidArgumentError,
  LeaseLostError,
  NotFoundError,
  TaskDoneError,
} from '../../core/errors.js';
import type { Job, JobStatus } from '../../core/types.js';
import type { JobOutcome } from '../../metrics/leasehold-metrics.js';
import type { EnqueueOptions } from '../../queue/enqueue-options.js';
import { TASKS_QUEUE } from '../../tasks/task-domain.js';
import type { ServiceContext } from '../context.js';
import { jobRefusal } from '../job-refusal.js';
import { ErrorResponse, IdParams } from '../schemas/common.js';
import {
  CompleteBody,
  CreateTaskBody,
  CreatedTaskSchema,
  FailBody,
  HeartbeatAnswer,
  HeartbeatBody,
  NextBody,
  HandBackBody,
  TaskList,
  TaskListQuery,
  TaskSchema,
} from '../schemas/tasks.js';
import { taskJson } from '../serialize-task.js';

/** Kept for callers that knew the name from here; the task domain owns it (tasks/task-domain.ts). */
export { TASKS_QUEUE };
const DEFAULT_LEASE_SECONDS = 30;
const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 503: ErrorResponse };
const refusals = { 404: ErrorResponse, 409: ErrorResponse };

export function taskRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { lh, events } = ctx;
  const jobs = lh.jobs;
  const tasks = lh.queue(TASKS_QUEUE);

  const list = (
    status: JobStatus | undefined,
    path: string,
    operationId: string,
    summary: string,
  ): void => {
    app.get<{ Querystring: Static<typeof TaskListQuery> }>(path, {
      config: { scope: 'read' },
      schema: {
        operationId,
        tags: ['tasks'],
        summary,
        querystring: TaskListQuery,
        response: { 200: TaskList, ...errors },
      },
      handler: async (request) => {
        const found = await jobs.list({
          queue: TASKS_QUEUE,
          ...(status ? { status } : {}),
          limit: request.query.limit ?? 100,
          offset: request.query.offset ?? 0,
        });
        return { tasks: found.map(taskJson) };
      },
    });
  };
  list(undefined, '/api/tasks', 'listTasks', 'All tasks.');
  list('completed', '/api/tasks/processed', 'listProcessedTasks', 'Completed tasks.');
  list('processing', '/api/tasks/started', 'listStartedTasks', 'Tasks being processed now.');

  app.post<{ Body: Static<typeof CreateTaskBody> }>('/api/tasks', {
    config: { scope: 'write' },
    schema: {
      operationId: 'createTask',
      tags: ['tasks'],
      summary:
        'Create a task (201), or get the live task with the same key (200), replaced when on_conflict or debounce asks.',
      body: CreateTaskBody,
      response: { 200: CreatedTaskSchema, 201: CreatedTaskSchema, ...errors },
    },
    handler: async (request, reply) => {
      const b = request.body;
      // The library's enqueue, its one validator and its defaults (maxAttempts 10; decision
      // 0231), its single-enqueue coalescer too. The schema has made task_data an object.
      const options: EnqueueOptions = {
        ...(b.key === undefined ? {} : { key: b.key }),
        ...(b.partition_key === undefined ? {} : { partitionKey: b.partition_key }),
        ...(b.priority === undefined ? {} : { priority: b.priority }),
        ...(b.scheduled_at ? { runAt: new Date(b.scheduled_at) } : {}),
        ...(b.max_attempts === undefined ? {} : { maxAttempts: b.max_attempts }),
        ...(b.on_conflict === undefined ? {} : { onConflict: b.on_conflict }),
        ...(b.debounce === undefined ? {} : { debounce: b.debounce }),
      };
      const { created, replaced, ...job } = await tasks
        .enqueue(b.task_data, options)
        .catch((error: unknown) => Promise.reject(inTaskFieldNames(error)));
      const task = taskJson(job);
      if (created) events.emit('task:created', task);
      if (replaced) events.emit('task:replaced', task);
      return reply.code(created ? 201 : 200).send({ ...task, replaced });
    },
  });

  app.get<{ Params: Static<typeof IdParams> }>('/api/tasks/:id', {
    config: { scope: 'read' },
    schema: {
      operationId: 'getTask',
      tags: ['tasks'],
      summary: 'One task.',
      params: IdParams,
      response: { 200: TaskSchema, 404: ErrorResponse, ...errors },
    },
    handler: async (request) => taskJson(await mustFind(request.params.id)),
  });

  app.post<{ Body: Static<typeof NextBody> }>('/api/tasks/next', {
    config: { scope: 'write' },
    schema: {
      operationId: 'claimNextTask',
      tags: ['tasks'],
      summary: 'Claim the next task (200, with its token), or 204 when none is ready.',
      body: NextBody,
      response: {
        200: TaskSchema,
        204: { type: 'null', description: 'No task is ready.' },
        ...errors,
      },
    },
    handler: async (request, reply) => {
      // Its latency is observed by the service's metrics from the engine's events (metrics.ts).
      const [job] = await jobs.claim(TASKS_QUEUE, {
        workerId: request.body.processor,
        leaseTtl: leaseMs(request.body.lease_seconds),
      });
      if (!job) return reply.code(204).send();
      const task = taskJson(job);
      events.emit('task:started', task);
      return task;
    },
  });

  app.put<{ Params: Static<typeof IdParams>; Body: Static<typeof HeartbeatBody> }>(
    '/api/tasks/:id/heartbeat',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'heartbeatTask',
        tags: ['tasks'],
        summary: 'Extend your claim on a task (202 with the new deadline).',
        params: IdParams,
        body: HeartbeatBody,
        response: { 202: HeartbeatAnswer, ...refusals, ...errors },
      },
      handler: async (request, reply) => {
        const { id } = request.params;
        const { processor: workerId, token } = request.body;
        const generation = generationOf(await mustFind(id), workerId, token);
        const [renewed] = await jobs.renewClaims(workerId, [{ id, generation }], {
          leaseTtl: leaseMs(request.body.lease_seconds),
        });
        if (!renewed) throw refusal(await mustFind(id), workerId, token);
        return reply.code(202).send({
          id,
          token: generation,
          must_heartbeat_before: renewed.leaseExpiresAt.toISOString(),
        });
      },
    },
  );

  app.put<{ Params: Static<typeof IdParams>; Body: Static<typeof CompleteBody> }>(
    '/api/tasks/:id/complete',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'completeTask',
        tags: ['tasks'],
        summary: 'Complete a task you hold (202); refused once your claim is lost.',
        params: IdParams,
        body: CompleteBody,
        response: { 202: TaskSchema, ...refusals, ...errors },
      },
      handler: async (request, reply) => {
        const { id } = request.params;
        const { processor: workerId, token, task_output } = request.body;
        const claimed = await mustFind(id);
        const generation = generationOf(claimed, workerId, token);
        const accepted = await jobs.complete(workerId, [
          { id, generation, result: task_output ?? null },
        ]);
        const done = await mustFind(id);
        if (!accepted.includes(id)) throw refusal(done, workerId, token);
        observeDuration(claimed, done, 'completed');
        const task = taskJson(done);
        events.emit('task:completed', task);
        return reply.code(202).send(task);
      },
    },
  );

  app.put<{ Params: Static<typeof IdParams>; Body: Static<typeof FailBody> }>(
    '/api/tasks/:id/fail',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'failTask',
        tags: ['tasks'],
        summary:
          'Report a failed attempt (202): retried after a delay, or dead-lettered at its last attempt.',
        params: IdParams,
        body: FailBody,
        response: { 202: TaskSchema, ...refusals, ...errors },
      },
      handler: async (request, reply) => {
        const { id } = request.params;
        const { processor: workerId, token, error, retry_in_seconds } = request.body;
        const claimed = await mustFind(id);
        const generation = generationOf(claimed, workerId, token);
        const [failed] = await jobs.fail(workerId, [
          { id, generation, error, retryDelay: Math.round((retry_in_seconds ?? 1) * 1000) },
        ]);
        const after = await mustFind(id);
        if (!failed) throw refusal(after, workerId, token);
        observeDuration(claimed, after, failed.outcome);
        const task = taskJson(after);
        events.emit('task:failed', task);
        return reply.code(202).send(task);
      },
    },
  );

  // Hand-back, under the library's word (decision 0235) and under the seed's route name, kept as
  // its alias: the same handler, the same answers.
  for (const [path, operationId, summary] of [
    [
      '/api/tasks/:id/hand-back',
      'handBackTask',
      'Hand a task you hold back (202): pending again at once, the attempt not counted. For shutdown.',
    ],
    [
      '/api/tasks/:id/release',
      'releaseTask',
      "Alias of PUT /api/tasks/{id}/hand-back (the seed's route name): hand a task you hold back (202).",
    ],
  ] as const) {
    app.put<{ Params: Static<typeof IdParams>; Body: Static<typeof HandBackBody> }>(path, {
      config: { scope: 'write' },
      schema: {
        operationId,
        tags: ['tasks'],
        summary,
        params: IdParams,
        body: HandBackBody,
        response: { 202: TaskSchema, ...refusals, ...errors },
      },
      handler: async (request, reply) => {
        const { id } = request.params;
        const { processor: workerId, token } = request.body;
        const generation = generationOf(await mustFind(id), workerId, token);
        const handedBack = await jobs.handBack(workerId, [{ id, generation }]);
        const after = await mustFind(id);
        if (!handedBack.includes(id)) throw refusal(after, workerId, token);
        const task = taskJson(after);
        events.emit('task:handed-back', task);
        // The former name, for event-stream clients that subscribed to it (deprecated).
        events.emit('task:released', task);
        return reply.code(202).send(task);
      },
    });
  }

  for (const [action, summary] of [
    ['cancel', 'Cancel a pending or running task (its worker is told through its next heartbeat).'],
    ['retry', 'Run a finished, dead or cancelled task again.'],
  ] as const) {
    app.post<{ Params: Static<typeof IdParams> }>(`/api/tasks/:id/${action}`, {
      config: { scope: 'write' },
      schema: {
        operationId: `${action}Task`,
        tags: ['tasks'],
        summary,
        params: IdParams,
        response: { 200: TaskSchema, ...refusals, ...errors },
      },
      handler: async (request) => {
        const { id } = request.params;
        // Read first: these routes act only on the tasks queue, never on another queue's job.
        const before = await mustFind(id);
        const job = action === 'cancel' ? await jobs.cancel(id) : await jobs.retry(id);
        // jobCancel answers the job as it is, so a finished one comes back unchanged.
        if (job && (action === 'retry' || job.status === 'cancelled')) {
          // A cancel of an already cancelled task answers the same, without a second event.
          if (action === 'retry' || before.status !== 'cancelled')
            events.emit(`task:${action === 'cancel' ? 'cancelled' : 'retried'}`, taskJson(job));
          return taskJson(job);
        }
        throw jobRefusal(action, job ?? (await mustFind(id)));
      },
    });
  }

  /** The task, read before acting: task routes never touch a job of another queue. */
  async function mustFind(id: number): Promise<Job> {
    const job = await jobs.get(id);
    if (!job || job.queue !== TASKS_QUEUE) throw new NotFoundError('task', id);
    return job;
  }

  /** The generation to guard with: the one sent, or (seed clients) that of the caller's own claim. */
  function generationOf(job: Job, workerId: string, token: number | undefined): number {
    if (token !== undefined) return token;
    if (job.status === 'processing' && job.claimedBy === workerId) return job.generation;
    throw refusal(job, workerId, token);
  }

  /** Time from claim to outcome on the database clock, for tasks settled through this instance. */
  function observeDuration(claimed: Job, settled: Job, outcome: JobOutcome): void {
    if (!claimed.claimedAt) return;
    const end = settled.finishedAt ?? settled.updatedAt;
    ctx.metrics?.library.recordJobOutcome(
      TASKS_QUEUE,
      outcome,
      Math.max(0, end.getTime() - claimed.claimedAt.getTime()) / 1000,
    );
  }
}

/** Why an operation on a task was refused, from the task as it is now. */
function refusal(job: Job, workerId: string, token: number | undefined): Error {
  if (job.status === 'completed' || job.status === 'dead' || job.status === 'cancelled')
    return new TaskDoneError(job.id, job.status);
  let reason: string;
  if (job.claimedBy !== workerId) reason = `the task is not claimed by "${workerId}"`;
  else if (token !== undefined && token !== job.generation)
    reason = `token ${token} was superseded by a newer claim`;
  else if (job.status === 'pending')
    reason = 'the claim expired and the task went back to the queue';
  else reason = 'the claim expired';
  return new LeaseLostError(`task:${job.id}`, reason);
}

/** The library's field names, as the task API spells them. */
const TASK_FIELDS: Readonly<Record<string, string>> = {
  payload: 'task_data',
  partitionKey: 'partition_key',
  maxAttempts: 'max_attempts',
  runAt: 'scheduled_at',
  onConflict: 'on_conflict',
};

/** An enqueue's invalid_argument naming the task API's field (task_data, not payload). */
function inTaskFieldNames(error: unknown): unknown {
  if (!(error instanceof InvalidArgumentError)) return error;
  const field = TASK_FIELDS[error.field];
  if (field === undefined) return error;
  return new InvalidArgumentError(field, error.message.slice(error.field.length + 2));
}

function leaseMs(seconds: number | undefined): number {
  return Math.round((seconds ?? DEFAULT_LEASE_SECONDS) * 1000);
}
