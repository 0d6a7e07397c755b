/**
 * The sequential model of a fenced register per key: write(token, value) is accepted iff its
 * token is at least the highest token accepted so far; a read returns the last accepted value.
 */
import { partitionBy } from './partition.js';
import type { Model, Operation, StepResult } from './search.js';

/** `mayBeLost`: an accepted write an asynchronous failover may have undone (see lease-model.ts). */
export type RegisterInput =
  | { kind: 'write'; key: string; token: number; value: string; mayBeLost?: true }
  | { kind: 'read'; key: string };

export type RegisterOutput =
  { kind: 'accepted' } | { kind: 'refused' } | { kind: 'value'; value: string | null };

export interface RegisterState {
  maxToken: number;
  value: string | null;
}

export type RegisterOperation = Operation<RegisterInput, RegisterOutput>;

export interface RegisterModelOptions {
  /** A broken variant for tests: every write is accepted. */
  acceptAnyToken?: boolean;
}

export function fencedRegisterModel(
  options: RegisterModelOptions = {},
): Model<RegisterState, RegisterInput, RegisterOutput> {
  return {
    init: () => ({ maxToken: -Infinity, value: null }),
    step: (s, input, output): StepResult<RegisterState> | StepResult<RegisterState>[] => {
      if (input.kind === 'write' && input.mayBeLost && output?.kind === 'accepted') {
        const accepts = options.acceptAnyToken === true || input.token >= s.maxToken;
        const after = { maxToken: Math.max(s.maxToken, input.token), value: input.value };
        // Taken effect as answered, or forgotten with the fence's row by the promoted standby.
        return [
          { ok: accepts, state: accepts ? after : s },
          { ok: true, state: s },
        ];
      }
      if (input.kind === 'read') {
        return {
          ok: output === undefined || (output.kind === 'value' && output.value === s.value),
          state: s,
        };
      }
      const accepts = options.acceptAnyToken === true || input.token >= s.maxToken;
      const after = { maxToken: Math.max(s.maxToken, input.token), value: input.value };
      if (output === undefined) return { ok: accepts, state: accepts ? after : s };
      if (output.kind === 'accepted') return { ok: accepts, state: accepts ? after : s };
      if (output.kind === 'refused') return { ok: !accepts, state: s };
      return { ok: false, state: s };
    },
    partition: (ops: readonly RegisterOperation[]) => partitionBy(ops, (i) => i.key),
    hash: (s) => `${s.maxToken}|${s.value}`,
    equal: (a, b) => a.maxToken === b.maxToken && a.value === b.value,
    describe: (input, output) => {
      const i = input.kind === 'write' ? `write(token ${input.token}, ${input.value})` : 'read()';
      return `${input.key}: ${i} -> ${output === undefined ? 'unknown' : JSON.stringify(output)}`;
    },
  };
}
