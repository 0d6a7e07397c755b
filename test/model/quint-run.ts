/**
 * Runs the Quint model (spec/leasehold.qnt) with the TypeScript simulator and reads its answer.
 *
 * The simulator's default backend is a Rust binary that quint downloads on first use; there is no
 * network in CI, so every run passes `--backend typescript`. A violation is read twice: from the
 * summary (`❌ name` per violated invariant) and from the trace written in ITF (--out-itf), so a
 * test can check what the counterexample did, not only that there was one.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;
export const quintBin = join(root, 'node_modules/.bin/quint');
export const specFile = join(root, 'spec/leasehold.qnt');

export interface QuintResult {
  exitCode: number;
  output: string;
  elapsedMs: number;
}

function runQuint(args: string[]): Promise<QuintResult> {
  if (!existsSync(quintBin)) {
    // A devDependency: its absence is a broken install, never a reason to skip.
    throw new Error(
      `quint is not installed at ${quintBin} (npm ci installs @informalsystems/quint)`,
    );
  }
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(
      quintBin,
      args,
      { cwd: root, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ exitCode: code, output: `${stdout}${stderr}`, elapsedMs: Date.now() - started });
      },
    );
  });
}

export function typecheck(): Promise<QuintResult> {
  return runQuint(['typecheck', specFile]);
}

export interface RunOptions {
  /** The instance module of spec/leasehold.qnt to run (a token scheme and replication mode). */
  main: string;
  invariants: string[];
  /** Properties counted, not checked: in how many traces each held at some state. */
  witnesses?: string[];
  seed: number;
  maxSamples: number;
  maxSteps: number;
}

/** One state of a counterexample, reduced to what the tests look at. */
export interface TraceState {
  now: number;
  action: { kind: string; holder: string; resource: string };
  /** Every grant's token per resource, in real-time order ("epoch.n"). */
  granted: Record<string, string[]>;
  /** The holders that trust their lease on each resource in this state. */
  trusting: Record<string, string[]>;
  /** The grant index of each write the fence accepted, per resource, in order. */
  accepted: Record<string, number[]>;
}

export interface Simulation extends QuintResult {
  violated: string[];
  /** Witness name → number of traces in which it held. */
  witnessed: Record<string, number>;
  /** Empty when no invariant was violated. */
  trace: TraceState[];
}

// ITF values: integers as {"#bigint": "n"}, maps as {"#map": [[k, v]]}, tuples as {"#tup": [..]}.
type Itf = unknown;
const int = (v: Itf): number => Number((v as { '#bigint': string })['#bigint']);
const entries = (v: Itf): [Itf, Itf][] => (v as { '#map': [Itf, Itf][] })['#map'];
const token = (v: Itf): string => {
  const t = v as { epoch: Itf; n: Itf };
  return `${int(t.epoch)}.${int(t.n)}`;
};

function readState(raw: Record<string, Itf>): TraceState {
  // Variables are qualified by the instance (`plainAsync::leasehold::now`).
  const get = (name: string): Itf => {
    const key = Object.keys(raw).find((k) => k === name || k.endsWith(`::${name}`));
    if (key === undefined) throw new Error(`the trace has no variable ${name}`);
    return raw[key];
  };
  const now = int(get('now'));
  const trusting: Record<string, string[]> = {};
  for (const [pair, trust] of entries(get('trust'))) {
    const [holder, resource] = (pair as { '#tup': [string, string] })['#tup'];
    trusting[resource] ??= [];
    if (now < int((trust as { deadline: Itf }).deadline)) trusting[resource].push(holder);
  }
  return {
    now,
    action: get('lastAction') as TraceState['action'],
    granted: Object.fromEntries(
      entries(get('granted')).map(([r, l]) => [r as string, (l as Itf[]).map(token)]),
    ),
    trusting,
    accepted: Object.fromEntries(
      entries(get('accepted')).map(([r, l]) => [r as string, (l as Itf[]).map(int)]),
    ),
  };
}

export async function simulate(options: RunOptions): Promise<Simulation> {
  const dir = await mkdtemp(join(tmpdir(), 'leasehold-quint-'));
  const itf = join(dir, 'trace.itf.json');
  try {
    const result = await runQuint([
      'run',
      '--backend',
      'typescript',
      '--main',
      options.main,
      '--invariants',
      ...options.invariants,
      ...(options.witnesses?.length ? ['--witnesses', ...options.witnesses] : []),
      '--seed',
      String(options.seed),
      '--max-samples',
      String(options.maxSamples),
      '--max-steps',
      String(options.maxSteps),
      '--verbosity',
      '1',
      '--out-itf',
      itf,
      specFile,
    ]);
    const named = [...result.output.matchAll(/❌ (\w+)/g)].map((m) => m[1] ?? '');
    // With one invariant quint names none: it says only "Invariant violated".
    const violated =
      named.length === 0 &&
      /Invariant violated/.test(result.output) &&
      options.invariants.length === 1
        ? options.invariants
        : named;
    const trace =
      existsSync(itf) && violated.length > 0
        ? (JSON.parse(await readFile(itf, 'utf8')) as { states: Record<string, Itf>[] }).states.map(
            readState,
          )
        : [];
    const witnessed = Object.fromEntries(
      [...result.output.matchAll(/(\w+) was witnessed in (\d+) trace/g)].map((m) => [
        m[1] ?? '',
        Number(m[2]),
      ]),
    );
    return { ...result, violated, witnessed, trace };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A counterexample in one line per step, for test diagnostics and the docs. */
export function describeTrace(trace: TraceState[]): string {
  return trace
    .slice(1)
    .map((s) =>
      [`t=${s.now}`, s.action.kind, s.action.holder, s.action.resource].filter(Boolean).join(' '),
    )
    .join('; ');
}
