/**
 * The job explorer over HTTP (issue 30 part 2, decision 0266): the search (read), and retry,
 * cancel (write) and delete (admin) of a selection of jobs by id, with the scopes of the one-job
 * routes they repeat. Acting on a whole filter is the queue routes' (routes/queue-jobs.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import type { JobStatus } from '../../core/types.js';
import type { BulkAction } from '../../queue/bulk-operations.js';
import type { ServiceContext } from '../context.js';
import { ErrorResponse } from '../schemas/common.js';
import {
  JobSearchAnswer,
  JobSearchQuery,
  SelectionAnswer,
  SelectionBody,
} from '../schemas/job-explorer.js';
import { jobJson } from '../serialize.js';

const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 503: ErrorResponse };

const SUMMARY: Record<BulkAction, string> = {
  retry: 'Run each listed dead, cancelled or completed job again; answers what became of each.',
  cancel: 'Cancel each listed pending or running job; answers what became of each.',
  delete: 'Delete each listed job that is not running; answers what became of each.',
};

export function jobExplorerRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const jobs = ctx.lh.jobs;

  app.get<{ Querystring: Static<typeof JobSearchQuery> }>('/api/jobs/search', {
    config: { scope: 'read' },
    schema: {
      operationId: 'searchJobs',
      tags: ['jobs'],
      summary:
        'Jobs matching a filter, one keyset page at a time (cursor, next), with an approximate total.',
      querystring: JobSearchQuery,
      response: { 200: JobSearchAnswer, ...errors },
    },
    handler: async (request) => {
      const { status, ...rest } = request.query;
      const page = await jobs.search({
        ...rest,
        ...(status === undefined ? {} : { status: status.split(',') as JobStatus[] }),
      });
      return { ...page, jobs: page.jobs.map(jobJson) };
    },
  });

  for (const action of ['retry', 'cancel', 'delete'] as const) {
    app.post<{ Body: Static<typeof SelectionBody> }>(`/api/jobs/selection/${action}`, {
      config: { scope: action === 'delete' ? 'admin' : 'write' },
      schema: {
        operationId: `${action}SelectedJobs`,
        tags: ['jobs'],
        summary: SUMMARY[action],
        body: SelectionBody,
        response: { 200: SelectionAnswer, ...errors },
      },
      handler: async (request) => {
        const results = await jobs.actOn(action, request.body.ids);
        for (const r of results)
          if (r.job)
            ctx.events.emit(`job:${action === 'retry' ? 'retried' : 'cancelled'}`, jobJson(r.job));
        return {
          done: results.filter((r) => r.outcome === 'done').length,
          results: results.map(({ id, outcome, status }) => ({
            id,
            outcome,
            ...(status === undefined ? {} : { status }),
          })),
        };
      },
    });
  }
}
