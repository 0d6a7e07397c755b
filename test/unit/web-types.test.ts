// The dashboard's types (web/src/types.ts, written by hand for a small bundle) are checked
// against what the service says it sends (issue 30, part 7): the OpenAPI document, typed by
// openapi-typescript, for every JSON answer the dashboard reads, and the service's own
// Snapshot type for the event stream (not a JSON route). Each check is an assignment from the
// service's shape to the dashboard's: a field the dashboard reads that the service does not
// send, or sends with another type, fails to compile. The service may send more.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { Leasehold } from '../../src/leasehold.js';
import { buildApp } from '../../src/service/app.js';

const root = new URL('../..', import.meta.url).pathname;

const CHECKS = `import type { operations } from './api.js';
import type * as Web from '${root}web/src/types.js';
import type { FleetSnapshot as ServiceSnapshot } from '${root}src/service/snapshot.js';

type Answer<K extends keyof operations> = operations[K] extends {
  responses: { 200: { content: { 'application/json': infer A } } };
}
  ? A
  : never;
/** What JSON.stringify makes of a value: Dates become strings, readonly arrays plain ones. */
type Json<T> = T extends Date
  ? string
  : T extends readonly (infer E)[]
    ? Json<E>[]
    : T extends object
      ? { -readonly [K in keyof T]: Json<T[K]> }
      : T;

export const checks = {
  lease: (a: Answer<'listLeases'>['leases'][number]): Web.LeaseView => a,
  worker: (a: Answer<'listWorkers'>['workers'][number]): Web.WorkerView => a,
  generator: (a: Answer<'getGenerator'>): Web.GeneratorView => a,
  leader: (a: Answer<'listLeaders'>['leaders'][number]): Web.LeaderView => a,
  schedule: (a: Answer<'listSchedules'>['schedules'][number]): Web.ScheduleView => a,
  queue: (a: Answer<'listQueues'>['queues'][number]): Web.QueueSettingsView => a,
  job: (a: Answer<'getJob'>): Web.JobView => a,
  search: (a: Answer<'searchJobs'>): Web.JobSearchView => a,
  explain: (a: Answer<'explainJob'>): Web.ExplanationView => a,
  trends: (a: Answer<'getTrends'>): Web.TrendSeriesView => a,
  snapshot: (s: Json<ServiceSnapshot>): Web.Snapshot => s,
};
`;

describe('dashboard types', () => {
  it('accept every answer the service documents, and the event stream snapshot', async () => {
    const lh = Leasehold.memory();
    const app = await buildApp({ lh });
    const dir = await mkdtemp(join(tmpdir(), 'leasehold-web-types-'));
    try {
      const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json();
      const types = astToString(await openapiTS(doc as Parameters<typeof openapiTS>[0]));
      await writeFile(join(dir, 'api.ts'), types);
      if (process.env.KEEP_WEB_TYPES) await writeFile(process.env.KEEP_WEB_TYPES, types);
      await writeFile(join(dir, 'checks.ts'), CHECKS);
      const program = ts.createProgram([join(dir, 'checks.ts')], {
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
        types: ['node'],
        typeRoots: [join(root, 'node_modules/@types')],
      });
      const diagnostics = ts
        .getPreEmitDiagnostics(program)
        .filter((d) => d.file?.fileName.endsWith('checks.ts'))
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      assert.deepEqual(diagnostics, [], 'web/src/types.ts accepts what the service sends');
    } finally {
      await app.close();
      await lh.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
