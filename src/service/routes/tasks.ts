/**
 * The task routes of the seed's API, on the queue engine: a task is a job of the `tasks` queue,
 * so next/heartbeat/complete carry the job's fencing guarantees. Heartbeat and complete are
 * guarded by processor AND claim generation (the `token`; clients that send none are matched
 * to the current generation of their own claim). A refusal says why: 404 unknown task,
 * 409 task_done (already finished), 409 lease_lost (the claim expired or moved on).
 */
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import { LeaseLostError, NotFoundError, TaskDoneError } from '../../core/errors.js';
import type { Job, JobStatus } from '../../core/types.js';
import { requireJsonObject } from '../../core/validate.js';
import type { ServiceContext } from '../context.js';
import { jobRefusal } from '../job-refusal.js';
import { ErrorResponse, IdParams } from '../schemas/common.js';
import {
  CompleteBody,
  CreateTaskBody,
  FailBody,
  HeartbeatAnswer,
  HeartbeatBody,
  NextBody,
  ReleaseBody,
  TaskList,
  TaskListQuery,
  TaskSchema,
} from '../schemas/tasks.js';
import { taskJson } from '../serialize-task.js';

export const TASKS_QUEUE = 'tasks';
const DEFAULT_LEASE_SECONDS = 30;
const DEFAULT_MAX_ATTEMPTS = 5;
const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 503: ErrorResponse };
const refusals = { 404: ErrorResponse, 409: ErrorResponse };

export function taskRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { lh, events } = ctx;
  const engine = lh.engine;

  const list = (status: JobStatus | undefined, path: string, summary: string): void => {
    app.get<{ Querystring: Static<typeof TaskListQuery> }>(path, {
      config: { scope: 'read' },
      schema: {
        tags: ['tasks'],
        summary,
        querystring: TaskListQuery,
        response: { 200: TaskList, ...errors },
      },
      handler: async (request) => {
        const jobs = await engine.jobList({
          queue: TASKS_QUEUE,
          ...(status ? { status } : {}),
          limit: request.query.limit ?? 100,
          offset: request.query.offset ?? 0,
        });
        return { tasks: jobs.map(taskJson) };
      },
    });
  };
  list(undefined, '/api/tasks', 'All tasks.');
  list('completed', '/api/tasks/processed', 'Completed tasks.');
  list('processing', '/api/tasks/started', 'Tasks being processed now.');

  app.post<{ Body: Static<typeof CreateTaskBody> }>('/api/tasks', {
    config: { scope: 'write' },
    schema: {
      tags: ['tasks'],
      summary: 'Create a task (201), or get the live task with the same key (200).',
      body: CreateTaskBody,
      response: { 200: TaskSchema, 201: TaskSchema, ...errors },
    },
    handler: async (request, reply) => {
      const b = request.body;
      // What jsonb refuses (NUL, lone surrogates) is refused here, naming the field, rather
      // than by PostgreSQL naming the statement. The body limit already bounds the size.
      const taskData = requireJsonObject('task_data', b.task_data, Number.POSITIVE_INFINITY);
      const [outcome] = await engine.jobEnqueue({
        jobs: [
          {
            queue: TASKS_QUEUE,
            payload: taskData,
            key: b.key ?? null,
            partitionKey: b.partition_key ?? null,
            priority: b.priority ?? 0,
            runAt: b.scheduled_at ? new Date(b.scheduled_at) : null,
            maxAttempts: b.max_attempts ?? DEFAULT_MAX_ATTEMPTS,
          },
        ],
      });
      const task = taskJson(outcome!.job);
      if (outcome!.created) events.emit('task:created', task);
      return reply.code(outcome!.created ? 201 : 200).send(task);
    },
  });

  app.get<{ Params: Static<typeof IdParams> }>('/api/tasks/:id', {
    config: { scope: 'read' },
    schema: {
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
      const started = performance.now();
      const [job] = await engine.jobClaimBatch({
        queues: [TASKS_QUEUE],
        workerId: request.body.processor,
        limit: 1,
        leaseTtlMs: leaseMs(request.body.lease_seconds),
      });
      ctx.metrics?.claimLatency.observe(
        { queue: TASKS_QUEUE },
        (performance.now() - started) / 1000,
      );
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
        tags: ['tasks'],
        summary: 'Extend your claim on a task (202 with the new deadline).',
        params: IdParams,
        body: HeartbeatBody,
        response: { 202: HeartbeatAnswer, ...refusals, ...errors },
      },
      handler: async (request, reply) => {
        const { id } = request.params;
        const { processor, token } = request.body;
        const generation = generationOf(await mustFind(id), processor, token);
        const [renewed] = await engine.jobRenewLeases({
          workerId: processor,
          jobs: [{ id, generation }],
          leaseTtlMs: leaseMs(request.body.lease_seconds),
        });
        if (!renewed) throw refusal(await mustFind(id), processor, token);
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
        tags: ['tasks'],
        summary: 'Complete a task you hold (202); refused once your claim is lost.',
        params: IdParams,
        body: CompleteBody,
        response: { 202: TaskSchema, ...refusals, ...errors },
      },
      handler: async (request, reply) => {
        const { id } = request.params;
        const { processor, token, task_output } = request.body;
        const claimed = await mustFind(id);
        const generation = generationOf(claimed, processor, token);
        const accepted = await engine.jobComplete({
          workerId: processor,
          jobs: [{ id, generation, result: task_output ?? null }],
        });
        const done = await mustFind(id);
        if (!accepted.includes(id)) throw refusal(done, processor, token);
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
        tags: ['tasks'],
        summary:
          'Report a failed attempt (202): retried after a delay, or dead-lettered at its last attempt.',
        params: IdParams,
        body: FailBody,
        response: { 202: TaskSchema, ...refusals, ...errors },
      },
      handler: async (request, reply) => {
        const { id } = request.params;
        const { processor, token, error, retry_in_seconds } = request.body;
        const claimed = await mustFind(id);
        const generation = generationOf(claimed, processor, token);
        const [failed] = await engine.jobFail({
          workerId: processor,
          jobs: [
            { id, generation, error, retryDelayMs: Math.round((retry_in_seconds ?? 1) * 1000) },
          ],
        });
        const after = await mustFind(id);
        if (!failed) throw refusal(after, processor, token);
        observeDuration(claimed, after, failed.outcome);
        const task = taskJson(after);
        events.emit('task:failed', task);
        return reply.code(202).send(task);
      },
    },
  );

  app.put<{ Params: Static<typeof IdParams>; Body: Static<typeof ReleaseBody> }>(
    '/api/tasks/:id/release',
    {
      config: { scope: 'write' },
      schema: {
        tags: ['tasks'],
        summary:
          'Hand a task you hold back (202): pending again at once, the attempt not counted. For shutdown.',
        params: IdParams,
        body: ReleaseBody,
        response: { 202: TaskSchema, ...refusals, ...errors },
      },
      handler: async (request, reply) => {
        const { id } = request.params;
        const { processor, token } = request.body;
        const generation = generationOf(await mustFind(id), processor, token);
        const handedBack = await engine.jobHandBack({
          workerId: processor,
          jobs: [{ id, generation }],
        });
        const after = await mustFind(id);
        if (!handedBack.includes(id)) throw refusal(after, processor, token);
        const task = taskJson(after);
        events.emit('task:released', task);
        return reply.code(202).send(task);
      },
    },
  );

  for (const [action, summary] of [
    ['cancel', 'Cancel a pending or running task (its worker is told through its next heartbeat).'],
    ['retry', 'Run a finished, dead or cancelled task again.'],
  ] as const) {
    app.post<{ Params: Static<typeof IdParams> }>(`/api/tasks/:id/${action}`, {
      config: { scope: 'write' },
      schema: {
        tags: ['tasks'],
        summary,
        params: IdParams,
        response: { 200: TaskSchema, ...refusals, ...errors },
      },
      handler: async (request) => {
        const { id } = request.params;
        // Read first: these routes act only on the tasks queue, never on another queue's job.
        const before = await mustFind(id);
        const job =
          action === 'cancel' ? await engine.jobCancel({ id }) : await engine.jobRetry({ id });
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
    const job = await engine.jobGet({ id });
    if (!job || job.queue !== TASKS_QUEUE) throw new NotFoundError('task', id);
    return job;
  }

  /** The generation to guard with: the one sent, or (seed clients) that of the caller's own claim. */
  function generationOf(job: Job, processor: string, token: number | undefined): number {
    if (token !== undefined) return token;
    if (job.status === 'processing' && job.claimedBy === processor) return job.generation;
    throw refusal(job, processor, token);
  }

  /** Time from claim to outcome on the database clock, for tasks settled through this instance. */
  function observeDuration(claimed: Job, settled: Job, outcome: string): void {
    if (!claimed.claimedAt) return;
    const end = settled.finishedAt ?? settled.updatedAt;
    ctx.metrics?.jobDuration.observe(
      { queue: TASKS_QUEUE, outcome },
      Math.max(0, end.getTime() - claimed.claimedAt.getTime()) / 1000,
    );
  }
}

/** Why an operation on a task was refused, from the task as it is now. */
function refusal(job: Job, processor: string, token: number | undefined): Error {
  if (job.status === 'completed' || job.status === 'dead' || job.status === 'cancelled')
    return new TaskDoneError(job.id, job.status);
  let reason: string;
  if (job.claimedBy !== processor) reason = `the task is not claimed by "${processor}"`;
  else if (token !== undefined && token !== job.generation)
    reason = `token ${token} was superseded by a newer claim`;
  else if (job.status === 'pending')
    reason = 'the claim expired and the task went back to the queue';
  else reason = 'the claim expired';
  return new LeaseLostError(`task:${job.id}`, reason);
}

function leaseMs(seconds: number | undefined): number {
  return Math.round((seconds ?? DEFAULT_LEASE_SECONDS) * 1000);
}
