import { Type } from 'typebox';
import { TREND_WINDOWS } from '../../queue/trend-series.js';
import { Name } from './common.js';

const DateTime = Type.String({ format: 'date-time' });
const Count = Type.Integer({ minimum: 0 });
const Ms = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

export const TrendsQuery = Type.Object(
  {
    window: Type.Optional(
      Type.Union(
        TREND_WINDOWS.map((w) => Type.Literal(w)),
        {
          default: '1h',
          description: '`1h`: a point a minute (60); `1d`: a point per 5 minutes (288).',
        },
      ),
    ),
    queue: Type.Optional(Name('One queue; every queue summed when left out.')),
  },
  { additionalProperties: false },
);

const Depth = Type.Union(
  [Type.Object({ waiting: Count, pending: Count, processing: Count }), Type.Null()],
  { description: 'Unfinished jobs by status as last sampled; null when none was sampled.' },
);

const Figures = {
  completed: Count,
  failed: Type.Integer({ minimum: 0, description: 'Failed attempts that will be retried.' }),
  dead: Count,
  started: Type.Integer({
    minimum: 0,
    description: 'Jobs whose latest claim began then, still running or finished.',
  }),
  pickupP50Ms: Ms('Median of claim time − available time, ms; null when none started.'),
  pickupP99Ms: Ms('99th percentile of the same, ms; null when none started.'),
  depth: Depth,
};

export const TrendPointSchema = Type.Object({
  at: DateTime,
  ...Figures,
  failureRate: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
    description: '(failed + dead) / (completed + failed + dead); null when no attempt ended.',
  }),
});

export const TrendMinuteSchema = Type.Object({
  minute: DateTime,
  queue: Type.String(),
  ...Figures,
});

export const TrendSeriesSchema = Type.Object({
  window: Type.Union(TREND_WINDOWS.map((w) => Type.Literal(w))),
  queue: Type.Union([Type.String(), Type.Null()]),
  stepMinutes: Type.Integer({ minimum: 1 }),
  from: DateTime,
  to: DateTime,
  points: Type.Array(TrendPointSchema, { description: 'Every step of the window, oldest first.' }),
  latest: Type.Array(TrendMinuteSchema, {
    description: "Each queue's newest recorded minute in the window, by name.",
  }),
});
