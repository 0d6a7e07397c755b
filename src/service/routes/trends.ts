/**
 * The console's trends (issue 30 part 5, decision 0265): per-minute figures of the queues over
 * the last hour or day, as the maintainer recorded them from the jobs.
 */
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import type { QueueTrendMinute } from '../../core/trends.js';
import type { TrendPoint, TrendSeries } from '../../queue/trend-series.js';
import type { ServiceContext } from '../context.js';
import { ErrorResponse } from '../schemas/common.js';
import { TrendSeriesSchema, TrendsQuery } from '../schemas/trends.js';

const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 503: ErrorResponse };

const pointJson = (p: TrendPoint) => ({ ...p, at: p.at.toISOString() });
const minuteJson = (m: QueueTrendMinute) => ({ ...m, minute: m.minute.toISOString() });

export function trendsJson(series: TrendSeries) {
  return {
    window: series.window,
    queue: series.queue,
    stepMinutes: series.stepMinutes,
    from: series.from.toISOString(),
    to: series.to.toISOString(),
    points: series.points.map(pointJson),
    latest: series.latest.map(minuteJson),
  };
}

export function trendRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  app.get<{ Querystring: Static<typeof TrendsQuery> }>('/api/trends', {
    config: { scope: 'read' },
    schema: {
      operationId: 'getTrends',
      tags: ['queues'],
      summary:
        'Throughput, failures, pickup latency and depth over the last hour or day, from the per-minute figures the maintainer records.',
      querystring: TrendsQuery,
      response: { 200: TrendSeriesSchema, ...errors },
    },
    handler: async (request) =>
      trendsJson(
        await ctx.lh.jobs.trends({
          window: request.query.window ?? '1h',
          ...(request.query.queue === undefined ? {} : { queue: request.query.queue }),
        }),
      ),
  });
}
