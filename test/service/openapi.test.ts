// The OpenAPI document served at /docs/json, checked by the tools people run on it (issue 29,
// decision 0257): Redocly's recommended rules (redocly.yaml) find no error, and a client typed by
// openapi-typescript from it compiles and talks to the running service. On PostgreSQL.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { closeTestDatabase } from '../support/database.js';
import { call, SCOPED_API_KEYS, SCOPED_KEYS, withApp } from '../support/service.js';

after(closeTestDatabase);

const root = new URL('../..', import.meta.url).pathname;
const run = promisify(execFile);

type Document = Record<string, unknown> & {
  paths: Record<string, Record<string, Operation>>;
};

type Operation = {
  operationId?: string;
  tags?: string[];
  security?: unknown[];
  responses: Record<string, { content?: unknown }>;
};

async function documentOf(app: FastifyInstance): Promise<Document> {
  const answer = await call(app, 'GET', '/docs/json');
  assert.equal(answer.status, 200, answer.text);
  return answer.body as unknown as Document;
}

async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'leasehold-openapi-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer: string }[];
}

describe('the OpenAPI document', () => {
  it('passes Redocly lint with the repository config: no errors, only the explained warning', () =>
    withApp(
      'openapi lint',
      async (app) => {
        const doc = await documentOf(app);
        const problems = await withTempDir(async (dir) => {
          const file = join(dir, 'openapi.json');
          await writeFile(file, JSON.stringify(doc));
          // The CLI users run, with the config users get (redocly.yaml): exit status 1 on errors.
          const cli = join(root, 'node_modules/@redocly/cli/bin/cli.js');
          const lint = await run(
            process.execPath,
            [cli, 'lint', '--config', join(root, 'redocly.yaml'), '--format', 'json', file],
            { cwd: root, maxBuffer: 16 * 1024 * 1024 },
          ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
          return (JSON.parse(lint.stdout) as { problems: LintProblem[] }).problems;
        });
        const found = problems.map(
          (p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`,
        );
        assert.deepEqual(
          found,
          [
            'warn operation-4xx-response at #/paths/~1healthz/get/responses: ' +
              'Operation must have at least one `4XX` response.',
          ],
          'redocly.yaml explains the one warning kept',
        );

        // What the rules do not check: ids, tags, security from each route's scope, one Error.
        const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
          Object.entries(methods).map(([method, operation]) => ({ path, method, ...operation })),
        );
        const ids = operations.map((o) => o.operationId);
        assert.equal(new Set(ids).size, operations.length, 'every operationId is unique');
        for (const id of ids) assert.match(String(id), /^[a-z][a-zA-Z]+$/, 'camelCase ids');
        const byId = new Map(operations.map((o) => [o.operationId, o]));
        assert.equal(byId.get('getJob')?.path, '/api/jobs/{id}');
        assert.equal(byId.get('listQueues')?.path, '/api/queues');
        assert.equal(byId.get('acquireLease')?.method, 'post');
        assert.deepEqual(byId.get('getHealth')?.security, [], 'public: no key');
        assert.deepEqual(byId.get('getJob')?.security, [{ apiKey: ['read'] }]);
        assert.deepEqual(byId.get('claimNextTask')?.security, [{ apiKey: ['write'] }]);
        assert.deepEqual(byId.get('startGenerator')?.security, [{ apiKey: ['admin'] }]);
        assert.ok(operations.every((o) => o.tags?.length));
        assert.deepEqual(doc.servers, [{ url: '/' }]);
        const errorAnswers = operations.flatMap((o) =>
          Object.entries(o.responses)
            .filter(([code]) => code >= '400')
            .map(([, answer]) => answer),
        );
        assert.ok(errorAnswers.length > 100);
        for (const answer of errorAnswers)
          assert.deepEqual(answer.content, {
            'application/json': { schema: { $ref: '#/components/schemas/Error' } },
          });
      },
      { apiKeys: SCOPED_API_KEYS },
    ));

  it('types a client with openapi-typescript that compiles and calls the running service', () =>
    withApp(
      'openapi client',
      async (app, lh) => {
        const job = await lh.queue('emails').enqueue({ to: 'ada' }, { type: 'send.v1' });
        const doc = await documentOf(app);
        await app.listen({ host: '127.0.0.1', port: 0 });
        const address = app.server.address();
        assert.ok(address && typeof address === 'object');
        await withTempDir(async (dir) => {
          const types = astToString(
            await openapiTS(doc as unknown as Parameters<typeof openapiTS>[0]),
          );
          // A .ts file, not .d.ts: checked in full while the standard library's are skipped.
          await writeFile(join(dir, 'api.ts'), types);
          await writeFile(join(dir, 'client.ts'), CLIENT);
          const program = ts.createProgram([join(dir, 'client.ts')], {
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            target: ts.ScriptTarget.ES2022,
            module: ts.ModuleKind.NodeNext,
            moduleResolution: ts.ModuleResolutionKind.NodeNext,
            lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
            types: [],
          });
          const diagnostics = ts
            .getPreEmitDiagnostics(program)
            .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
          assert.deepEqual(diagnostics, [], 'the typed client compiles (strict)');

          // Run it: the same file, its types erased, against the service on a real port.
          const client = (await import(pathToFileURL(join(dir, 'client.ts')).href)) as {
            getJob(base: string, key: string, id: number): Promise<Record<string, unknown>>;
            listQueues(base: string, key: string): Promise<{ queues: { queue: string }[] }>;
          };
          const base = `http://127.0.0.1:${address.port}`;
          const got = await client.getJob(base, SCOPED_KEYS.read, job.id);
          assert.equal(got.id, job.id);
          assert.equal(got.queue, 'emails');
          assert.equal(got.type, 'send.v1');
          assert.equal(got.status, 'pending');
          const queues = await client.listQueues(base, SCOPED_KEYS.read);
          assert.deepEqual(
            queues.queues.map((q) => q.queue),
            ['emails'],
          );
          await assert.rejects(client.getJob(base, SCOPED_KEYS.read, job.id + 1000), /not_found/);
        });
      },
      { apiKeys: SCOPED_API_KEYS },
    ));
});

// A small client written against the generated types only: paths, operations and the shared
// Error schema. The @ts-expect-error lines prove the answers are typed (not `any`).
const CLIENT = `import type { components, operations, paths } from './api.js';

type Job = paths['/api/jobs/{id}']['get']['responses'][200]['content']['application/json'];
type JobId = paths['/api/jobs/{id}']['get']['parameters']['path']['id'];
type Queues = operations['listQueues']['responses'][200]['content']['application/json'];
type ApiError = components['schemas']['Error'];

async function request<T>(base: string, key: string, path: string): Promise<T> {
  const answer = await fetch(base + path, { headers: { authorization: 'Bearer ' + key } });
  if (!answer.ok) {
    const { error }: ApiError = await answer.json();
    throw new Error(error.code + ': ' + error.message);
  }
  return (await answer.json()) as T;
}

export async function getJob(base: string, key: string, id: JobId): Promise<Job> {
  const job = await request<Job>(base, key, '/api/jobs/' + id);
  const steps: { name: string; generation: number }[] = job.steps;
  // @ts-expect-error progress is a percentage, a JSON object or null, never a string
  const progress: string = job.progress;
  void [steps, progress];
  return job;
}

export async function listQueues(base: string, key: string): Promise<Queues> {
  const answer = await request<Queues>(base, key, '/api/queues');
  const pending: number = answer.queues[0]!.counts.pending;
  void pending;
  // @ts-expect-error a queue's name is a string
  const wrong: number = answer.queues[0]!.queue;
  void wrong;
  return answer;
}
`;
