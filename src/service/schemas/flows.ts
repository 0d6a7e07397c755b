/** Schemas of the flow route (routes/flows.ts) and of a job's children (GET /api/jobs/:id). */
import { Type } from 'typebox';
import { JobSchema } from './jobs.js';

/** The library's FlowDefinition as JSON; its fields are checked by the library's validator. */
export const FlowBody = Type.Object(
  {
    payload: Type.Unknown({ description: "The root job's payload: any JSON value." }),
    options: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: "The root's enqueue options." }),
    ),
    children: Type.Array(Type.Object({}, { additionalProperties: true }), {
      minItems: 1,
      description:
        '{ queue, payload, options?, children? } each; options are enqueue options (no key) and parentPolicy.',
    }),
  },
  { additionalProperties: false },
);

export const FlowAnswer = Type.Object(
  {
    created: Type.Boolean({
      description: 'False when the root key met a live job: job is that job, nothing written.',
    }),
    job: JobSchema,
    children: Type.Array(Type.Object({}, { additionalProperties: true }), {
      description: '{ job, children } each, in enqueue order.',
    }),
  },
  { additionalProperties: false },
);
