/**
 * Operations over many jobs of one queue over HTTP (issue 27 part 5, decision 0250): retry and
 * cancel every job matching a filter (write, as the one-job actions), and delete them (admin,
 * as DELETE /api/jobs/:id). Each answers `{ changed }`. The filter is the library's
 * (`lh.queue(name).retryAll`): an unknown field or a status the operation never applies to is
 * a 400 `invalid_argument` naming the field, and nothing is changed.
 */
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import type { BulkAction, JobFilter } from '../../queue/bulk-operations.js';
import type { ServiceContext } from '../context.js';
import { ErrorResponse } from '../schemas/common.js';
import { ChangedSchema, JobFilterBody, JobFilterQuery, QueueParams } from '../schemas/queues.js';

const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 503: ErrorResponse };

const EVENT: Record<BulkAction, string> = {
  retry: 'queue:jobs-retried',
  cancel: 'queue:jobs-cancelled',
  delete: 'queue:jobs-deleted',
};

export function queueJobRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { lh } = ctx;

  const run = async (
    action: BulkAction,
    queue: string,
    fields: Static<typeof JobFilterBody>,
  ): Promise<{ changed: number }> => {
    const { batchSize, ...filter } = fields;
    const q = lh.queue(queue);
    const options = batchSize === undefined ? {} : { batchSize };
    const changed =
      action === 'retry'
        ? await q.retryAll(filter as JobFilter, options)
        : action === 'cancel'
          ? await q.cancelAll(filter as JobFilter, options)
          : await q.deleteAll(filter as JobFilter, options);
    if (changed > 0) ctx.events.emit(EVENT[action], { queue, changed });
    return { changed };
  };

  for (const action of ['retry', 'cancel'] as const) {
    app.post<{ Params: Static<typeof QueueParams>; Body: Static<typeof JobFilterBody> }>(
      `/api/queues/:name/jobs/${action}`,
      {
        config: { scope: 'write' },
        schema: {
          operationId: `${action}QueueJobs`,
          tags: ['queues'],
          summary:
            action === 'retry'
              ? 'Run every matching dead, cancelled or completed job of the queue again; answers how many.'
              : 'Cancel every matching pending or running job of the queue; answers how many.',
          params: QueueParams,
          body: JobFilterBody,
          response: { 200: ChangedSchema, ...errors },
        },
        // No body is no filter: `curl -X POST …/jobs/retry` retries every job it can.
        preValidation: (request, _reply, done) => {
          request.body ??= {};
          done();
        },
        handler: (request) => run(action, request.params.name, request.body),
      },
    );
  }

  app.delete<{ Params: Static<typeof QueueParams>; Querystring: Static<typeof JobFilterQuery> }>(
    '/api/queues/:name/jobs',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'deleteQueueJobs',
        tags: ['queues'],
        summary:
          'Delete every matching job of the queue that is not running (filter in the query string); answers how many.',
        params: QueueParams,
        querystring: JobFilterQuery,
        response: { 200: ChangedSchema, ...errors },
      },
      handler: (request) => {
        const { status, ...rest } = request.query;
        const statuses = status === undefined ? {} : { status: status.split(',') };
        return run('delete', request.params.name, { ...rest, ...statuses } as Static<
          typeof JobFilterBody
        >);
      },
    },
  );
}
