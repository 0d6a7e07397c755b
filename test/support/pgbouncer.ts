/**
 * A real pgbouncer in transaction-pooling mode in front of the test database, for the tests of
 * `poolMode: 'transaction'`. It runs as the unprivileged `postgres` user (pgbouncer refuses to
 * run as root) from a scratch directory, on a free loopback port.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

export const PGBOUNCER = '/usr/sbin/pgbouncer';

export interface Bouncer {
  /** A connection string to the same database through pgbouncer. */
  readonly url: string;
  stop(): Promise<void>;
}

export function pgbouncerAvailable(): boolean {
  return spawnSync(PGBOUNCER, ['--version']).status === 0;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export async function startPgbouncer(databaseUrl: string, poolSize = 4): Promise<Bouncer> {
  const target = new URL(databaseUrl);
  const dir = await mkdtemp(join(tmpdir(), 'leasehold-pgbouncer-'));
  await chmod(dir, 0o777);
  const port = await freePort();
  const user = decodeURIComponent(target.username);
  const password = decodeURIComponent(target.password);
  const database = target.pathname.slice(1) || 'postgres';
  const ini = join(dir, 'pgbouncer.ini');
  await writeFile(
    ini,
    [
      '[databases]',
      `${database} = host=${target.hostname} port=${target.port} dbname=${database} user=${user} password=${password}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 500',
      'ignore_startup_parameters = extra_float_digits,options,application_name',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  await writeFile(join(dir, 'users.txt'), `"${user}" ""\n`);
  for (const file of ['pgbouncer.ini', 'users.txt']) await chmod(join(dir, file), 0o644);
  // pgbouncer will not run as root: drop to the postgres user the embedded server also uses.
  const asRoot = userInfo().uid === 0;
  const ids = asRoot ? idsOf('postgres') : undefined;
  const child: ChildProcess = spawn(PGBOUNCER, [ini], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(ids ?? {}),
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const url = `postgres://${encodeURIComponent(user)}:x@127.0.0.1:${port}/${database}`;
  await waitForPort(port, child, () => output);
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((resolve) =>
        child.exitCode !== null ? resolve(null) : child.once('exit', resolve),
      );
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function idsOf(name: string): { uid: number; gid: number } {
  const uid = Number(spawnSync('id', ['-u', name]).stdout.toString().trim());
  const gid = Number(spawnSync('id', ['-g', name]).stdout.toString().trim());
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) throw new Error(`no user ${name}`);
  return { uid, gid };
}

async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const { connect } = await import('node:net');
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited: ${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen: ${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
