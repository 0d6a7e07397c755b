// No SQL is built from user input: in src/engine/postgres, a template literal that reads as SQL
// may splice in only the quoted schema identifier and vetted constants (column lists, clock
// and notify fragments) built from literals. Everything else goes in as a bound parameter
// ($1…). A change that splices a value in fails here, naming the file and the expression.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

const ROOT = new URL('../..', import.meta.url).pathname;
const ENGINE_DIR = join(ROOT, 'src/engine/postgres');

/** Upper-case SQL words: a template with one of these in its text is treated as SQL. */
const SQL_WORDS =
  /\b(SELECT|INSERT|UPDATE|DELETE|FROM|WHERE|WITH|CREATE|ALTER|DROP|LISTEN|NOTIFY|VALUES|RETURNING|JOIN|CASE|WHEN|SET|LOCK|TABLE|INDEX|GRANT|TRUNCATE|COPY)\b/;

/**
 * What may be spliced into SQL, each checked by hand:
 * - the schema, validated as a lower-case identifier and quoted once (sql-identifiers.ts):
 *   `s`, `schema`, `this.quotedSchema`, and the notify channel derived from it;
 * - constants made of literals in the query modules (column lists, state CASEs, intervals,
 *   DURABLE_COMMIT, the claim's AVAILABLE_FROM);
 * - the parameters of the SQL helpers (CLOCK, STATE, notified, finishedNotified, appendError, jobColumns,
 *   renewSet, ownedLive, DURABLE_CLOCK, and the epoch helpers EPOCH_CTE, NEXT_TERM,
 *   QUARANTINE_GATE, BEGIN_EPOCH, grantsNewTerm; the claim's flow-control fragments CLAIM_LIMITS,
 *   CLAIM_ASSIGNED, RATE_STARTS, PARTITION_HEAD, PARTITION_ROOM, FAIR_RANKS, BUSY_KEYS,
 *   BUSY_KEYS_LIMITED, NOT_BUSY; the operations over many jobs' matching, matchingBatch and
 *   batchAnswer; the job search's searchFilter and searchPage; postgres-queues.ts's `field`; step-queries.ts's HELD and isoText), which are
 *   only ever called with literals, the constants above, or vetted helper calls and templates
 *   (checked below).
 */
const ALLOWED_NAMES = new Set([
  's',
  'schema',
  'this.quotedSchema',
  'this.ctx.notifyChannel',
  'cols',
  'LEASE_COLUMNS',
  'LEASE_LOCK_COLUMNS',
  'SLOT_COLUMNS',
  'WORKER_COLUMNS',
  'MS',
  'LIVE',
  'FINAL',
  'OWNED',
  'FREE_AT',
  'ERRORS_KEPT',
  'JOBS_TOPIC',
  'JOB_FINISHED_TOPIC',
  'FINISHED_IDS_MAX',
  'READY_OR_PARTITION_FREED',
  'REPLACING_INPUT',
  'SCAN_FACTOR',
  'DELETABLE',
  'CLAIM_ASSIGNED',
  'ENQUEUE_INPUT',
  'ENQUEUE_COLUMNS',
  'ENQUEUE_VALUES',
  'CLAIM_RETURNING',
  'AVAILABLE_FROM',
  'liveSameHolder',
  'acquireConflict',
  'returning',
  'RELEASE_SET',
  'predicate',
  'DURABLE_COMMIT',
  'FIRST_TERM',
  'SLOT_FREED',
  'CLAIM_SET',
  'NOT_BUSY',
  'COLUMNS',
  'PERMIT_COLUMNS',
  'owned',
  // postgres-queues.ts: `field(...)` of literals, kept in `fresh`
  'fresh.paused',
  'fresh.concurrency',
  'fresh.perKey',
  'fresh.rateLimit',
  'fresh.ratePer',
  'fresh.fairness',
  // helper parameters
  'param',
  'now',
  'error',
  'channel',
  'source',
  'where',
  'ttl',
  'holder',
  'token',
  'previous',
  'grantsNewTerm',
  'durableCommit',
  'resource',
  'jsonKey',
  'whenNamed',
  'otherwise',
  'applies',
  'changed',
  'notifiers',
  'instant',
  // flow-queries.ts (decision 0255): literal input and column lists, flowValues' parameters
  'FLOW_INPUT',
  'FLOW_COLUMNS',
  'parentId',
  'policy',
  'DELETED_OUTCOME',
  'DEAD_OUTCOME',
  'outcome',
  'stamp',
  'alias',
  // job-search-queries.ts searchPage (decision 0266): chosen from two literal tuples by the order
  'past',
  'direction',
  'edge',
  // job-tallies-sql.ts and postgres-trends.ts (decision 0270): a CTE's name, a rank expression
  'deleted',
  'rank',
  // job-queries.ts (decision 0281): a batch's key and ordinal, read from its `$3`
  'REF_KEY',
  'ORDINAL',
]);
const ALLOWED_HELPERS = new Set([
  'CLOCK',
  'STATE',
  'notified',
  'finishedNotified',
  'appendError',
  'jobColumns',
  'renewSet',
  'ownedLive',
  'DURABLE_CLOCK',
  'EPOCH_CTE',
  'NEXT_TERM',
  'QUARANTINE_GATE',
  'BEGIN_EPOCH',
  'grantsNewTerm',
  'CLAIM_LIMITS',
  'PARTITION_ROOM',
  'PARTITION_HEAD',
  'BUSY_KEYS',
  'BUSY_KEYS_LIMITED',
  'FAIR_RANKS',
  'RATE_STARTS',
  'matching',
  'matchingBatch',
  'batchAnswer',
  'field',
  // step-queries.ts: the ownership guard and a sleep's ISO instant
  'HELD',
  'isoText',
  'flowValues',
  'flowSettled',
  'flowReturning',
  // job-search-queries.ts: the job explorer's filter and page (decision 0266)
  'searchFilter',
  'searchPage',
  // postgres-trends.ts (decision 0265): a minute of a column, a percentile of a literal, and
  // the depth of one of three literal statuses
  'MINUTE',
  'PERCENTILE',
  'NOW_DEPTH',
  'tallyRemoved',
  'PICKUP_BUCKET',
  'BUCKET_VALUE',
  'WEIGHTED_PERCENTILE',
  // job-queries.ts (decision 0281): the n-th value of a job's entry in `$3`, n a literal
  'refText',
  'refJson',
  // jobs-size-class.ts (decision 0282): the jobs heap's size, called with the schema only
  'HEAP_BYTES',
]);

export interface Splice {
  file: string;
  line: number;
  expression: string;
}

/** Is this spliced expression one of the vetted ones? Helpers take only literals or vetted names. */
function isVetted(expression: ts.Expression): boolean {
  if (ts.isStringLiteralLike(expression) || ts.isNumericLiteral(expression)) return true;
  if (ts.isIdentifier(expression) || ts.isPropertyAccessExpression(expression))
    return ALLOWED_NAMES.has(expression.getText());
  if (ts.isCallExpression(expression))
    return (
      ts.isIdentifier(expression.expression) &&
      ALLOWED_HELPERS.has(expression.expression.text) &&
      expression.arguments.every(isVetted)
    );
  // A template passed to a helper (a condition, say): vetted when everything spliced into it is.
  if (ts.isTemplateExpression(expression))
    return expression.templateSpans.every((span) => isVetted(span.expression));
  return false;
}

/** The splices in SQL templates of one source text that are not vetted. */
export function unvettedSqlSplices(file: string, source: string): Splice[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: Splice[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isTemplateExpression(node)) {
      const text = [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' ');
      if (SQL_WORDS.test(text)) {
        for (const span of node.templateSpans) {
          if (isVetted(span.expression)) continue;
          const { line } = sf.getLineAndCharacterOfPosition(span.expression.getStart(sf));
          found.push({ file, line: line + 1, expression: span.expression.getText(sf) });
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

describe('SQL splicing in the PostgreSQL engine', () => {
  it('splices only the schema identifier and vetted constants into SQL', () => {
    const files = sourceFiles(ENGINE_DIR);
    assert.ok(files.length > 10, `found the engine sources (${files.length} files)`);
    const found = files.flatMap((f) =>
      unvettedSqlSplices(relative(ROOT, f), readFileSync(f, 'utf8')),
    );
    assert.deepEqual(
      found.map((s) => `${s.file}:${s.line}: \${${s.expression}}`),
      [],
      'bind values as $n parameters instead of splicing them into SQL',
    );
  });

  it('catches a splice of a value into SQL, also through a helper or an expression', () => {
    const sample = [
      'const a = `SELECT * FROM ${s}.leases WHERE resource = ${p.resource}`;',
      "const b = `${CLOCK('$2')} UPDATE ${s}.jobs SET key = '${key}'`;",
      'const c = `DELETE FROM ${s}.jobs WHERE queue = ${CLOCK(queue)}`;',
      'const d = `SELECT ${cols} FROM ${s}.jobs LIMIT ${String(limit)}`;',
      'const e = `lease ${p.resource} was lost`;', // a message, not SQL: allowed
      "const f = `SELECT 1 FROM clock WHERE ${QUARANTINE_GATE(s, grantsNewTerm(name, '$2'))}`;",
      'const g = `SELECT 1 FROM clock WHERE ${QUARANTINE_GATE(s, `h.name = ${name}`)}`;',
    ].join('\n');
    assert.deepEqual(
      unvettedSqlSplices('sample.ts', sample).map((s) => s.expression),
      [
        'p.resource',
        'key',
        'CLOCK(queue)',
        'String(limit)',
        "QUARANTINE_GATE(s, grantsNewTerm(name, '$2'))",
        'QUARANTINE_GATE(s, `h.name = ${name}`)',
      ],
    );
  });
});
