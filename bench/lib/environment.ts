/** What a result depends on besides the code: the machine and every version involved. */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { promisify } from 'node:util';

const ROOT = new URL('../../', import.meta.url);
const run = promisify(execFile);

export interface Machine {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly os: string;
  /** 1, 5 and 15-minute load averages: other processes may share the machine. */
  readonly loadAverage: number[];
}

export function describeMachine(): Machine {
  const list = cpus();
  return {
    cpus: list.length,
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${platform()} ${release()}`,
    loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

async function packageVersion(path: string): Promise<string> {
  try {
    const json = JSON.parse(await readFile(new URL(path, ROOT), 'utf8')) as { version: string };
    return json.version;
  } catch {
    return 'unknown';
  }
}

/** The short commit and whether the working tree differs from it, when run from a clone. */
async function commit(): Promise<string> {
  try {
    const cwd = ROOT.pathname;
    const head = (await run('git', ['rev-parse', '--short', 'HEAD'], { cwd })).stdout.trim();
    const dirty = (
      await run('git', ['status', '--porcelain', '--untracked-files=no'], { cwd })
    ).stdout.trim();
    return dirty ? `${head} (with uncommitted changes)` : head;
  } catch {
    return 'unknown';
  }
}

export async function describeVersions(serverVersion: string): Promise<Record<string, string>> {
  return {
    leasehold: `${await packageVersion('package.json')} @ ${await commit()}`,
    node: process.version,
    pg: await packageVersion('node_modules/pg/package.json'),
    'graphile-worker': await packageVersion('node_modules/graphile-worker/package.json'),
    'pg-boss': await packageVersion('node_modules/pg-boss/package.json'),
    postgresql: serverVersion,
  };
}
