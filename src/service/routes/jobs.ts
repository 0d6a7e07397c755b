/**
 * Queue administration over HTTP (the dashboard's actions): list and inspect jobs of any queue,
 * retry, cancel (a running job's worker learns it at its next renewal and its signal fires),
 * and delete (admin); and the long poll that waits for a job to finish (decision 0249).
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { toMilliseconds } from '../../core/duration.js';
import { NotFoundError, isLeaseholdError } from '../../core/errors.js';
import { JOB_STATUSES, type JobStatus } from '../../core/types.js';
import type { ServiceContext } from '../context.js';
import { jobRefusal } from '../job-refusal.js';
import { isFinished } from '../../queue/job-waiters.js';
import { extendReplyDeadline } from '../reply-deadline.js';
import { ErrorResponse, IdParams, Name, Paging } from '../schemas/common.js';
import {
  JOB_CHILDREN_SHOWN,
  JOB_WAIT_MAX_MS,
  JobDetailSchema,
  JobSchema,
  JobWaitAnswer,
  JobWaitQuery,
} from '../schemas/jobs.js';
import { jobDetailJson, jobJson } from '../serialize.js';

const Query = Type.Object(
  {
    ...Paging.properties,
    queue: Type.Optional(Name('Only this queue.')),
    status: Type.Optional(Type.Union(JOB_STATUSES.map((s) => Type.Literal(s)))),
    partitionKey: Type.Optional(Name('Only this partition key.')),
  },
  { additionalProperties: false },
);
const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 503: ErrorResponse };

export function jobRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const jobs = ctx.lh.jobs;

  app.get<{ Querystring: Static<typeof Query> }>('/api/jobs', {
    config: { scope: 'read' },
    schema: {
      operationId: 'listJobs',
      tags: ['jobs'],
      summary: 'Jobs, newest first, by queue, status or partition.',
      querystring: Query,
      response: { 200: Type.Object({ jobs: Type.Array(JobSchema) }), ...errors },
    },
    handler: async (request) => {
      const q = request.query;
      const found = await jobs.list({
        ...(q.queue ? { queue: q.queue } : {}),
        ...(q.status ? { status: q.status as JobStatus } : {}),
        ...(q.partitionKey ? { partitionKey: q.partitionKey } : {}),
        limit: q.limit ?? 100,
        offset: q.offset ?? 0,
      });
      return { jobs: found.map(jobJson) };
    },
  });

  app.get<{ Params: Static<typeof IdParams> }>('/api/jobs/:id', {
    config: { scope: 'read' },
    schema: {
      operationId: 'getJob',
      tags: ['jobs'],
      summary:
        'One job with its payload, headers, attempt history, recorded steps and flow children.',
      params: IdParams,
      response: { 200: JobDetailSchema, 404: ErrorResponse, ...errors },
    },
    handler: async (request) => {
      const { id } = request.params;
      const [job, steps, family] = await Promise.all([
        jobs.get(id),
        jobs.steps(id),
        jobs.children(id, { limit: JOB_CHILDREN_SHOWN }),
      ]);
      if (!job) throw new NotFoundError('job', id);
      return {
        ...jobDetailJson(job, steps),
        children: family.children.map(({ id, queue, type, status, parentPolicy }) => ({
          id,
          queue,
          type,
          status,
          parentPolicy,
        })),
        childCount: family.total,
      };
    },
  });

  // Waits in progress, ended early (answered as they stand) when the server closes.
  const waits = new Set<AbortController>();
  app.addHook('preClose', (done) => {
    for (const wait of waits) wait.abort();
    done();
  });

  app.get<{ Params: Static<typeof IdParams>; Querystring: Static<typeof JobWaitQuery> }>(
    '/api/jobs/:id/wait',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'waitForJob',
        tags: ['jobs'],
        summary: `Long poll: answers when the job is finished (done: true) or after timeout, at most ${JOB_WAIT_MAX_MS / 1000} s (done: false).`,
        params: IdParams,
        querystring: JobWaitQuery,
        response: { 200: JobWaitAnswer, 404: ErrorResponse, ...errors },
      },
      handler: async (request, reply) => {
        const { id } = request.params;
        const asked = request.query.timeout;
        const waitMs = Math.min(
          asked === undefined ? JOB_WAIT_MAX_MS : toMilliseconds('timeout', asked, { min: 0 }),
          JOB_WAIT_MAX_MS,
        );
        extendReplyDeadline(request, reply, waitMs);
        const stop = new AbortController();
        const gone = (): void => stop.abort(); // the client left, or the server closes
        reply.raw.once('close', gone);
        waits.add(stop);
        try {
          const job = await jobs.waitUntilFinished(id, { timeout: waitMs, signal: stop.signal });
          return {
            done: isFinished(job),
            job: jobJson(job),
          };
        } catch (error) {
          if (!isLeaseholdError(error, 'aborted')) throw error;
          const job = await jobs.get(id);
          if (!job) throw new NotFoundError('job', id);
          return {
            done: isFinished(job),
            job: jobJson(job),
          };
        } finally {
          waits.delete(stop);
          reply.raw.off('close', gone);
        }
      },
    },
  );

  for (const action of ['retry', 'cancel'] as const) {
    app.post<{ Params: Static<typeof IdParams> }>(`/api/jobs/:id/${action}`, {
      config: { scope: 'write' },
      schema: {
        operationId: `${action}Job`,
        tags: ['jobs'],
        summary:
          action === 'retry'
            ? 'Run a finished, dead or cancelled job again.'
            : 'Cancel a pending or running job.',
        params: IdParams,
        response: { 200: JobSchema, 404: ErrorResponse, 409: ErrorResponse, ...errors },
      },
      handler: async (request) => {
        const { id } = request.params;
        const job = action === 'retry' ? await jobs.retry(id) : await jobs.cancel(id);
        // jobCancel answers the job as it is, so a finished one comes back unchanged.
        if (job && (action === 'retry' || job.status === 'cancelled')) {
          ctx.events.emit(`job:${action === 'retry' ? 'retried' : 'cancelled'}`, jobJson(job));
          return jobJson(job);
        }
        const current = job ?? (await jobs.get(id));
        if (!current) throw new NotFoundError('job', id);
        throw jobRefusal(action, current);
      },
    });
  }

  app.delete<{ Params: Static<typeof IdParams> }>('/api/jobs/:id', {
    config: { scope: 'admin' },
    schema: {
      operationId: 'deleteJob',
      tags: ['jobs'],
      summary: 'Delete a job that is not running.',
      params: IdParams,
      response: {
        200: Type.Object({ deleted: Type.Integer() }),
        404: ErrorResponse,
        409: ErrorResponse,
        ...errors,
      },
    },
    handler: async (request) => {
      const { id } = request.params;
      if (await jobs.delete(id)) return { deleted: id };
      const current = await jobs.get(id);
      if (!current) throw new NotFoundError('job', id);
      throw jobRefusal('delete', current);
    },
  });
}
