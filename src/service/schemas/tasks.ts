import { Type } from 'typebox';
import { FencingTokenSchema, JsonObject, Name, Paging, StorableText } from './common.js';

const DateTime = Type.String({ format: 'date-time' });
const NullableDate = Type.Union([DateTime, Type.Null()]);

/** A task as the seed's API shows it (snake_case), plus the queue's safety fields. */
export const TaskSchema = Type.Object({
  id: Type.Integer(),
  task_data: Type.Unknown(),
  status: Type.String(),
  scheduled_at: DateTime,
  processor: Type.Union([Type.String(), Type.Null()]),
  token: Type.Integer({
    description: "The job's fencing token (its generation): send it with heartbeat and complete.",
  }),
  attempts: Type.Integer(),
  max_attempts: Type.Integer(),
  started_at: NullableDate,
  must_heartbeat_before: NullableDate,
  processed_at: NullableDate,
  task_output: Type.Unknown(),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: DateTime,
});

export const TaskList = Type.Object({ tasks: Type.Array(TaskSchema) });

export const CreateTaskBody = Type.Object(
  {
    task_data: JsonObject,
    scheduled_at: Type.Optional(DateTime),
    key: Type.Optional(
      Name('Dedup key: while a task with this key is live, it is returned instead.'),
    ),
    partition_key: Type.Optional(Name('Tasks with one partition key run one at a time, in order.')),
    priority: Type.Optional(Type.Integer({ minimum: -1000, maximum: 1000 })),
    max_attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    on_conflict: Type.Optional(
      Type.Union([Type.Literal('keep'), Type.Literal('replace')], {
        description:
          "With `key`, when a task with that key is live: 'keep' (default) answers it unchanged, 'replace' overwrites it while it is pending (answered 200 with replaced true); a running task is never changed.",
      }),
    ),
    debounce: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1 }), Type.String({ minLength: 1, maxLength: 32 })], {
        description:
          "With `key`: run once, this long after the last create with that key (milliseconds, or a duration such as '5s'); each create replaces the pending task. Not with scheduled_at.",
      }),
    ),
  },
  { additionalProperties: false },
);

/** What a create answers: the task, and whether the create overwrote a pending one. */
export const CreatedTaskSchema = Type.Object({
  ...TaskSchema.properties,
  replaced: Type.Boolean({
    description: 'True when on_conflict replace (or debounce) overwrote the pending task.',
  }),
});

export const NextBody = Type.Object(
  {
    processor: Name('Who takes the task: the worker id.'),
    lease_seconds: Type.Optional(Type.Number({ minimum: 0.1, maximum: 86_400 })),
  },
  { additionalProperties: false },
);

export const HeartbeatBody = Type.Object(
  {
    processor: Name('The worker holding the task.'),
    token: Type.Optional(FencingTokenSchema),
    lease_seconds: Type.Optional(Type.Number({ minimum: 0.1, maximum: 86_400 })),
  },
  { additionalProperties: false },
);

export const CompleteBody = Type.Object(
  {
    processor: Name('The worker holding the task.'),
    token: Type.Optional(FencingTokenSchema),
    task_output: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

export const FailBody = Type.Object(
  {
    processor: Name('The worker holding the task.'),
    token: Type.Optional(FencingTokenSchema),
    error: StorableText({ minLength: 1, maxLength: 4096 }),
    retry_in_seconds: Type.Optional(Type.Number({ minimum: 0, maximum: 86_400 })),
  },
  { additionalProperties: false },
);

export const HeartbeatAnswer = Type.Object({
  id: Type.Integer(),
  token: Type.Integer(),
  must_heartbeat_before: DateTime,
});

export const TaskListQuery = Paging;

export const HandBackBody = Type.Object(
  {
    processor: Name('The worker holding the task.'),
    token: Type.Optional(FencingTokenSchema),
  },
  { additionalProperties: false },
);
