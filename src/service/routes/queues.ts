/**
 * Flow control over HTTP (issue 26, decision 0242): every queue with its counts and settings,
 * pause and resume (write, as the job actions), settings (admin), and why a job waits.
 */
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import { NotFoundError } from '../../core/errors.js';
import type { ServiceContext } from '../context.js';
import { ErrorResponse, IdParams } from '../schemas/common.js';
import {
  ConfigureBody,
  ExplanationSchema,
  QueueList,
  QueueParams,
  QueueSettingsSchema,
} from '../schemas/queues.js';
import { explanationJson, queueOverviewJson, queueSettingsJson } from '../serialize.js';

const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 503: ErrorResponse };

export function queueRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { lh } = ctx;

  app.get('/api/queues', {
    config: { scope: 'read' },
    schema: {
      operationId: 'listQueues',
      tags: ['queues'],
      summary: 'Every queue that has jobs or settings: its jobs by status and its flow control.',
      response: { 200: QueueList, ...errors },
    },
    handler: async () => ({ queues: (await lh.jobs.queues()).map(queueOverviewJson) }),
  });

  for (const action of ['pause', 'resume'] as const) {
    app.post<{ Params: Static<typeof QueueParams> }>(`/api/queues/:name/${action}`, {
      config: { scope: 'write' },
      schema: {
        operationId: `${action}Queue`,
        tags: ['queues'],
        summary:
          action === 'pause'
            ? 'Pause a queue: none of its jobs starts until it is resumed; jobs in flight finish.'
            : 'Resume a paused queue (resuming one that is not paused changes nothing).',
        params: QueueParams,
        response: { 200: QueueSettingsSchema, ...errors },
      },
      handler: async (request) => {
        const queue = lh.queue(request.params.name);
        const settings = action === 'pause' ? await queue.pause() : await queue.resume();
        const json = queueSettingsJson(settings);
        ctx.events.emit(`queue:${action === 'pause' ? 'paused' : 'resumed'}`, json);
        return json;
      },
    });
  }

  app.put<{ Params: Static<typeof QueueParams>; Body: Static<typeof ConfigureBody> }>(
    '/api/queues/:name/settings',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'updateQueueSettings',
        tags: ['queues'],
        summary:
          "Change a queue's flow control: fields left out stay, null removes a limit. Answers the settings in force.",
        params: QueueParams,
        body: ConfigureBody,
        response: { 200: QueueSettingsSchema, ...errors },
      },
      handler: async (request) => {
        const settings = await lh.queue(request.params.name).configure(request.body);
        const json = queueSettingsJson(settings);
        ctx.events.emit('queue:configured', json);
        return json;
      },
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>('/api/jobs/:id/explain', {
    config: { scope: 'read' },
    schema: {
      operationId: 'explainJob',
      tags: ['jobs'],
      summary: 'Why a job is not running: the first reason that applies.',
      params: IdParams,
      response: { 200: ExplanationSchema, 404: ErrorResponse, ...errors },
    },
    handler: async (request) => {
      const explanation = await lh.jobs.explain(request.params.id);
      if (!explanation) throw new NotFoundError('job', request.params.id);
      return explanationJson(explanation);
    },
  });
}
