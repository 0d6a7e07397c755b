/**
 * Schemas of the job explorer's routes (routes/job-explorer.ts, decision 0266): the search, and
 * the actions on a selection of jobs by id.
 */
import { Type } from 'typebox';
import { JOB_STATUSES } from '../../core/types.js';
import { LIMITS } from '../../core/validate.js';
import { SEARCH_SCAN_ROWS } from '../../engine/job-admin.js';
import { SEARCH_TEXT_MAX } from '../../queue/job-search.js';
import { SELECTION_MAX } from '../../queue/job-selection.js';
import { Name } from './common.js';
import { JobSchema } from './jobs.js';

const Instant = (description: string) =>
  Type.String({ minLength: 1, maxLength: 64, description: `${description} ISO 8601.` });

export const JobSearchQuery = Type.Object(
  {
    queue: Type.Optional(Name('Only this queue.')),
    status: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: `One status or several separated by commas (${JOB_STATUSES.join(', ')}).`,
      }),
    ),
    type: Type.Optional(Name('Only jobs of this type.')),
    key: Type.Optional(Name('Only jobs with this dedup key.')),
    partitionKey: Type.Optional(Name('Only jobs of this partition key.')),
    createdSince: Type.Optional(Instant('Only jobs created at or after this instant.')),
    createdBefore: Type.Optional(Instant('Only jobs created before this instant.')),
    text: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: SEARCH_TEXT_MAX,
        description:
          "Only jobs whose payload, as JSON text (PostgreSQL's payload::text), contains this, ignoring case.",
      }),
    ),
    order: Type.Optional(
      Type.Union([Type.Literal('newest'), Type.Literal('oldest')], {
        description: 'newest (the default): id descending; oldest: id ascending.',
      }),
    ),
    cursor: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description: "The previous page's `next`.",
      }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.listMaxLimit, default: 50 })),
  },
  { additionalProperties: false },
);

export const JobSearchAnswer = Type.Object(
  {
    jobs: Type.Array(JobSchema),
    next: Type.Union([Type.Integer(), Type.Null()], {
      description: `The next page's cursor; null when no match is left. A page reads at most ${SEARCH_SCAN_ROWS} jobs, so it may hold fewer than \`limit\` with a next page to ask for.`,
    }),
    total: Type.Integer({ description: 'How many jobs match the filter in all.' }),
    totalExact: Type.Boolean({
      description:
        "True when `total` is a count; false when it is PostgreSQL's planner estimate (never a full count of a large table).",
    }),
  },
  { additionalProperties: false },
);

export const SelectionBody = Type.Object(
  {
    ids: Type.Array(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), {
      minItems: 1,
      maxItems: SELECTION_MAX,
      description: `The jobs to act on, at most ${SELECTION_MAX}.`,
    }),
  },
  { additionalProperties: false },
);

export const SelectionAnswer = Type.Object(
  {
    done: Type.Integer({ description: 'How many of the jobs the action applied to.' }),
    results: Type.Array(
      Type.Object(
        {
          id: Type.Integer(),
          outcome: Type.Union(
            [Type.Literal('done'), Type.Literal('not_found'), Type.Literal('refused')],
            {
              description:
                'done: the action applied; not_found: no such job; refused: its status is one the action never applies to.',
            },
          ),
          status: Type.Optional(Type.String({ description: "The job's status now." })),
        },
        { additionalProperties: false },
      ),
      { description: 'One per distinct id, in the order given.' },
    ),
  },
  { additionalProperties: false },
);
