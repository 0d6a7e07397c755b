/**
 * A real highly available PostgreSQL on this machine, started and stopped by a test: one etcd
 * (v3 API), two Patroni members running Debian's PostgreSQL 15, and haproxy in front that routes
 * to whichever member Patroni's REST API calls the primary.
 *
 *   client ──► haproxy (url) ──► m1 or m2, whichever answers 200 on GET /primary
 *                                 m1, m2: Patroni + PostgreSQL 15, leader key in etcd
 *
 * - `url` goes through haproxy and stays valid across failovers; haproxy checks each member's REST
 *   port every 300 ms (`option httpchk OPTIONS /primary`, the GET
 *   answer without a body) and cuts the sessions of a member marked
 *   down (`on-marked-down shutdown-sessions`), so clients of a demoted primary are disconnected
 *   instead of being left on a server that now refuses writes.
 * - `failover()` is a crash: SIGKILL of the primary's Patroni and of its whole PostgreSQL (the
 *   postmaster's process group), then the standby is promoted once the leader key expires
 *   (ttl 10 s). It then restarts the killed member, which rejoins as a standby (pg_rewind when
 *   its timeline diverged), unless `{ rejoin: false }`; `rejoin()` does that part on its own.
 * - `switchover()` is planned: POST /switchover to Patroni.
 * - `synchronous: true` sets Patroni's `synchronous_mode`: a commit is acknowledged only once the
 *   standby has it, and Patroni promotes only the synchronous standby, so nothing acknowledged
 *   is lost by a failover. Not `synchronous_mode_strict` unless asked (`strict: true`): with two
 *   members, strict mode would block every write while the old primary is still down.
 *
 * Durability is PostgreSQL's default (fsync, synchronous_commit, full_page_writes on). Everything
 * runs as the unprivileged `postgres` user (Patroni and PostgreSQL refuse root) from a scratch
 * directory under the system tmpdir, on free loopback ports; `stop()` kills every process whose
 * working directory is in that scratch directory and removes it. A process exit handler kills
 * what is left if the test process ends without `stop()`.
 *
 * Needs the Debian packages patroni, etcd-server, haproxy and postgresql (15): see
 * `haClusterAvailable()` and `haSkip()`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export const PG_BIN_DIR = '/usr/lib/postgresql/15/bin';
const PATRONI = '/usr/bin/patroni';
const ETCD = '/usr/bin/etcd';
const HAPROXY = '/usr/sbin/haproxy';
/** Debian's libfaketime, for `memberEnv` (LD_PRELOAD it and set FAKETIME, e.g. '+30s'). */
export const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

export const MEMBERS = ['m1', 'm2'] as const;
export type MemberName = (typeof MEMBERS)[number];

export interface HaClusterOptions {
  /** Patroni `synchronous_mode`: commits wait for the standby; only the sync standby is promoted. */
  synchronous: boolean;
  /** Patroni `synchronous_mode_strict`: no commit at all without a sync standby. Default false. */
  strict?: boolean;
  /**
   * Extra environment of one member's Patroni (and so of its PostgreSQL), e.g. a clock 30 s
   * ahead: `{ m2: { LD_PRELOAD: LIBFAKETIME, FAKETIME: '+30s' } }` (checked: m2's now() is 30 s
   * ahead, before and after it is promoted).
   */
  memberEnv?: Partial<Record<MemberName, Record<string, string>>>;
  /** Receives every log line of etcd, Patroni (with its PostgreSQL) and haproxy, prefixed with
   *  the member or process name. LEASEHOLD_HA_LOG=<file> appends them to a file as well. */
  onLog?: (line: string) => void;
}

export interface FailoverReport {
  from: MemberName;
  to: MemberName;
  /** From the SIGKILL until the new primary took a write through `url`. */
  writableMs: number;
  /** From the SIGKILL until the killed member streamed again (undefined with `rejoin: false`). */
  rejoinedMs?: number;
}

export interface SwitchoverReport {
  from: MemberName;
  to: MemberName;
  /** From the request until the new primary took a write through `url`. */
  writableMs: number;
}

export interface HaCluster {
  /** Through haproxy: always the current primary, valid across failovers and switchovers. */
  readonly url: string;
  /** Straight to each member's PostgreSQL (a standby refuses writes). */
  readonly memberUrls: Readonly<Record<MemberName, string>>;
  /** The scratch directory (data directories, configuration, sockets). */
  readonly dir: string;
  /** How long the start took, until `waitHealthy()` first held. */
  readonly startedInMs: number;
  /** The member Patroni reports as the primary now (GET /primary answers 200), if any. */
  primary(): Promise<MemberName | undefined>;
  /** Crashes the primary; resolves once the other member takes writes through `url`. */
  failover(options?: { rejoin?: boolean }): Promise<FailoverReport>;
  /** Starts a member killed by `failover({ rejoin: false })`; resolves once it streams again. */
  rejoin(member: MemberName): Promise<void>;
  /** A planned switchover to the standby through Patroni's REST API. */
  switchover(): Promise<SwitchoverReport>;
  /** Resolves once there is a writable primary behind `url` and the other member streams from it
   *  (as the synchronous standby in synchronous mode). */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** The primary's timeline (grows by one at each promotion). */
  timeline(): Promise<number>;
  /** Kills everything, waits until no process is left, removes the scratch directory. */
  stop(): Promise<void>;
}

/** Whether the Debian packages the cluster needs are installed. */
export function haClusterAvailable(): boolean {
  return [PATRONI, ETCD, HAPROXY, join(PG_BIN_DIR, 'postgres')].every((f) => existsSync(f));
}

let skipLogged = false;
/**
 * The `skip` option of every HA test: a reason when the packages are missing (logged once, one
 * line), false otherwise. Under CI=true it is always false, so a missing package fails the test
 * (in `startHaCluster`) instead of skipping it unseen.
 */
export function haSkip(): string | false {
  if (haClusterAvailable() || process.env.CI === 'true') return false;
  const reason =
    'patroni, etcd-server, haproxy or postgresql 15 is not installed (.ci/run installs them)';
  if (!skipLogged) console.log(`# skipping the HA cluster tests: ${reason}`);
  skipLogged = true;
  return reason;
}

const SUPERUSER = { username: 'postgres', password: 'leasehold-ha' };
const REPLICATION = { username: 'replicator', password: 'leasehold-rep' };
const TIMINGS = { ttl: 10, loop_wait: 1, retry_timeout: 3 };

interface Member {
  name: MemberName;
  pgPort: number;
  restPort: number;
  dir: string;
  config: string;
  patroni?: ChildProcess;
}

export async function startHaCluster(options: HaClusterOptions): Promise<HaCluster> {
  if (!haClusterAvailable())
    throw new Error(
      'the HA cluster needs the Debian packages patroni, etcd-server, haproxy and postgresql',
    );
  const started = Date.now();
  // LEASEHOLD_HA_LOG=<file>: every line of every cluster process is appended there too.
  const logFile = process.env.LEASEHOLD_HA_LOG;
  const onLog = (line: string): void => {
    options.onLog?.(line);
    if (logFile) appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`);
  };
  const recent: string[] = [];
  const log = (line: string): void => {
    recent.push(line);
    if (recent.length > 200) recent.shift();
    onLog(line);
  };
  const dir = await mkdtemp(join(tmpdir(), 'leasehold-ha-'));
  await chmod(dir, 0o755);
  const ids = userInfo().uid === 0 ? idsOf('postgres') : undefined;
  if (ids) await chown(dir, ids.uid, ids.gid);
  const children = new Set<ChildProcess>();
  const killAllNow = (): void => {
    for (const pid of processesUnder(dir)) tryKill(pid);
    for (const child of children) if (child.pid) tryKill(-child.pid);
  };
  process.on('exit', killAllNow);

  const launch = (
    what: string,
    command: string,
    args: string[],
    env: Record<string, string> = {},
  ): ChildProcess => {
    // detached: its own process group, so one signal reaches the process and its helpers.
    const child = spawn(command, args, {
      cwd: dir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
      ...(ids ?? {}),
    });
    children.add(child);
    child.on('exit', () => children.delete(child));
    for (const stream of [child.stdout, child.stderr]) {
      let partial = '';
      stream?.on('data', (data: Buffer) => {
        const lines = (partial + data.toString()).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) if (line.trim()) log(`${what}: ${line}`);
      });
    }
    return child;
  };
  const failWith = (what: string): Error =>
    new Error(`${what}\n--- last log lines ---\n${recent.slice(-40).join('\n')}`);

  const ports = await freePorts(7);
  const [etcdPort, etcdPeerPort, proxyPort] = [ports[0]!, ports[1]!, ports[2]!];
  const memberPorts = ports.slice(3);
  const scope = `leasehold-${process.pid}-${Date.now().toString(36)}`;
  const members: Member[] = MEMBERS.map((name, i) => ({
    name,
    pgPort: memberPorts[2 * i]!,
    restPort: memberPorts[2 * i + 1]!,
    dir: join(dir, name),
    config: join(dir, `${name}.yml`),
  }));
  const memberNamed = (name: MemberName): Member => members.find((m) => m.name === name)!;
  const memberUrls = Object.fromEntries(members.map((m) => [m.name, pgUrl(m.pgPort)])) as Record<
    MemberName,
    string
  >;
  const url = pgUrl(proxyPort);

  const asOwner = async (path: string): Promise<void> => {
    if (ids) await chown(path, ids.uid, ids.gid);
  };
  const writeOwned = async (path: string, text: string, mode = 0o600): Promise<void> => {
    await writeFile(path, text, { mode });
    await asOwner(path);
  };

  // etcd: a single member, v3 API.
  const etcdDir = join(dir, 'etcd');
  await mkdir(etcdDir, { mode: 0o700 });
  await asOwner(etcdDir);
  const etcdClient = `http://127.0.0.1:${etcdPort}`;
  const etcdPeer = `http://127.0.0.1:${etcdPeerPort}`;
  const etcd = launch('etcd', ETCD, [
    '--name=e1',
    `--data-dir=${etcdDir}`,
    `--listen-client-urls=${etcdClient}`,
    `--advertise-client-urls=${etcdClient}`,
    `--listen-peer-urls=${etcdPeer}`,
    `--initial-advertise-peer-urls=${etcdPeer}`,
    `--initial-cluster=e1=${etcdPeer}`,
    '--initial-cluster-state=new',
    '--logger=zap',
    '--log-level=warn',
  ]);

  // Patroni configuration (JSON is YAML).
  for (const m of members) {
    await mkdir(m.dir, { mode: 0o700 });
    await asOwner(m.dir);
    const config = {
      scope,
      namespace: '/leasehold-ha/',
      name: m.name,
      log: { level: 'WARNING' },
      restapi: { listen: `127.0.0.1:${m.restPort}`, connect_address: `127.0.0.1:${m.restPort}` },
      etcd3: { hosts: [`127.0.0.1:${etcdPort}`] },
      bootstrap: {
        dcs: {
          ...TIMINGS,
          maximum_lag_on_failover: 1024 * 1024,
          synchronous_mode: options.synchronous,
          synchronous_mode_strict: options.synchronous && options.strict === true,
          postgresql: {
            use_pg_rewind: true,
            use_slots: true,
            parameters: {
              wal_level: 'replica',
              hot_standby: 'on',
              max_wal_senders: 10,
              max_replication_slots: 10,
              wal_keep_size: '128MB',
              wal_log_hints: 'on',
              fsync: 'on',
              synchronous_commit: 'on',
              full_page_writes: 'on',
              max_connections: 200,
            },
          },
        },
        initdb: [{ encoding: 'UTF8' }, { 'auth-local': 'trust' }],
      },
      postgresql: {
        listen: `127.0.0.1:${m.pgPort}`,
        connect_address: `127.0.0.1:${m.pgPort}`,
        data_dir: join(m.dir, 'data'),
        bin_dir: PG_BIN_DIR,
        pgpass: join(m.dir, 'pgpass'),
        authentication: { superuser: SUPERUSER, replication: REPLICATION },
        parameters: {
          unix_socket_directories: m.dir,
          shared_buffers: '32MB',
          // A crash test's answers must be real: nothing acknowledged may be lost by a crash.
          fsync: 'on',
        },
        pg_hba: [
          'local all all trust',
          `host replication ${REPLICATION.username} 127.0.0.1/32 scram-sha-256`,
          'host all all 127.0.0.1/32 scram-sha-256',
        ],
      },
      tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
    };
    await writeOwned(m.config, JSON.stringify(config, null, 2));
  }

  // haproxy: to whichever member answers 200 on its REST GET /primary.
  const haproxyConfig = join(dir, 'haproxy.cfg');
  await writeOwned(
    haproxyConfig,
    [
      'global',
      '  maxconn 1000',
      'defaults',
      '  mode tcp',
      '  timeout connect 2s',
      '  timeout client 30m',
      '  timeout server 30m',
      '  timeout check 1s',
      'listen primary',
      `  bind 127.0.0.1:${proxyPort}`,
      // OPTIONS: Patroni answers the status line only (haproxy hangs up after reading it).
      '  option httpchk OPTIONS /primary',
      '  http-check expect status 200',
      '  default-server inter 300ms fastinter 300ms downinter 300ms fall 2 rise 1 on-marked-down shutdown-sessions',
      ...members.map((m) => `  server ${m.name} 127.0.0.1:${m.pgPort} check port ${m.restPort}`),
      '',
    ].join('\n'),
    0o644,
  );

  const startPatroni = (m: Member): void => {
    m.patroni = launch(m.name, PATRONI, [m.config], options.memberEnv?.[m.name] ?? {});
  };

  const rest = (m: Member, path: string, method = 'GET', body?: unknown) =>
    httpJson(m.restPort, path, method, body);
  const isPrimary = async (m: Member): Promise<boolean> =>
    (await rest(m, '/primary').catch(() => ({ status: 0 }))).status === 200;
  const primary = async (): Promise<MemberName | undefined> => {
    for (const m of members) if (await isPrimary(m)) return m.name;
    return undefined;
  };

  /** Which member a write through haproxy lands on, if one took it. */
  const writableThroughProxy = async (): Promise<MemberName | undefined> => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query(`SET statement_timeout = '2s'`);
      const { rows } = await client.query<{ port: number; ro: boolean }>(
        `SELECT inet_server_port() AS port, pg_is_in_recovery() AS ro`,
      );
      if (rows[0]!.ro) return undefined;
      // A write proves the primary accepts them (in synchronous mode: its standby confirms).
      await client.query(`CREATE TEMP TABLE probe (x int); DROP TABLE probe`);
      await client.query(`SELECT txid_current()`);
      return members.find((m) => m.pgPort === Number(rows[0]!.port))?.name;
    } catch {
      return undefined;
    } finally {
      await client.end().catch(() => {});
    }
  };

  /** The standbys streaming from `primaryName`, by member name, with their sync state. */
  const streamingFrom = async (primaryName: MemberName): Promise<Map<string, string>> => {
    const client = new pg.Client({
      connectionString: memberUrls[primaryName],
      connectionTimeoutMillis: 2_000,
    });
    client.on('error', () => {});
    try {
      await client.connect();
      const { rows } = await client.query<{ application_name: string; sync_state: string }>(
        `SELECT application_name, sync_state FROM pg_stat_replication WHERE state = 'streaming'`,
      );
      return new Map(rows.map((r) => [r.application_name, r.sync_state]));
    } catch {
      return new Map();
    } finally {
      await client.end().catch(() => {});
    }
  };

  const poll = async <T>(
    what: string,
    check: () => Promise<T | undefined | false>,
    timeoutMs: number,
  ): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await check();
      if (value !== undefined && value !== false) return value;
      if (Date.now() > deadline) throw failWith(`timed out after ${timeoutMs} ms: ${what}`);
      if (!running(etcd)) throw failWith('etcd exited');
      await sleep(100);
    }
  };

  /** PostgreSQL streams to it (as the synchronous standby when asked), and Patroni agrees: a
   *  switchover is refused until Patroni's sync key names the candidate. */
  const standbyReady = async (m: Member, syncState: string): Promise<boolean> => {
    if (options.synchronous && syncState !== 'sync') return false;
    const path = options.synchronous ? '/sync' : '/replica';
    return (await rest(m, path).catch(() => ({ status: 0 }))).status === 200;
  };

  const waitHealthy = async (timeoutMs = 120_000): Promise<void> => {
    await poll(
      'a writable primary with a streaming standby',
      async () => {
        const leader = await primary();
        if (!leader) return undefined;
        if ((await writableThroughProxy()) !== leader) return undefined;
        const standbys = await streamingFrom(leader);
        const other = members.find((m) => m.name !== leader)!.name;
        const state = standbys.get(other);
        if (!state) return undefined;
        return standbyReady(memberNamed(other), state);
      },
      timeoutMs,
    );
  };

  const killMember = (m: Member): void => {
    // The postmaster runs in its own session (Patroni setsid()s it): kill its whole group, so no
    // backend lingers, and kill Patroni (and its group) at the same moment.
    const postmaster = postmasterPid(join(m.dir, 'data'));
    if (m.patroni?.pid) tryKill(-m.patroni.pid);
    if (postmaster) {
      tryKill(-postmaster);
      tryKill(postmaster);
    }
  };
  const waitGone = async (m: Member): Promise<void> => {
    await poll(
      `${m.name} to exit`,
      async () => processesUnder(m.dir).length === 0 && !running(m.patroni),
      30_000,
    );
  };

  const rejoin = async (name: MemberName): Promise<void> => {
    const m = memberNamed(name);
    if (running(m.patroni)) throw new Error(`${name} is running`);
    startPatroni(m);
    await poll(
      `${name} to stream again`,
      async () => {
        const leader = await primary();
        if (!leader || leader === name) return false;
        const state = (await streamingFrom(leader)).get(name);
        return state !== undefined && standbyReady(m, state);
      },
      120_000,
    );
  };

  const stop = async (): Promise<void> => {
    for (const child of children) if (child.pid) tryKill(-child.pid);
    for (const m of members) killMember(m);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const left = processesUnder(dir);
      if (left.length === 0 && children.size === 0) break;
      for (const pid of left) tryKill(pid);
      if (Date.now() > deadline)
        throw new Error(`processes still running after stop: ${left.join(', ')}`);
      await sleep(50);
    }
    process.off('exit', killAllNow);
    await rm(dir, { recursive: true, force: true });
  };

  try {
    await poll(
      'etcd to answer',
      async () => (await httpJson(etcdPort, '/health').catch(() => ({ status: 0 }))).status === 200,
      30_000,
    );
    startPatroni(members[0]!);
    await poll('m1 to bootstrap and lead', () => isPrimary(members[0]!), 120_000);
    startPatroni(members[1]!);
    launch('haproxy', HAPROXY, ['-db', '-f', haproxyConfig]);
    await waitHealthy(180_000);
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }

  return {
    url,
    memberUrls,
    dir,
    startedInMs: Date.now() - started,
    primary,
    waitHealthy,
    rejoin,
    stop,

    async failover({ rejoin: andRejoin = true } = {}) {
      const from = await poll('a primary', primary, 60_000);
      const m = memberNamed(from);
      const to = members.find((x) => x !== m)!.name;
      const killedAt = Date.now();
      killMember(m);
      await waitGone(m);
      await poll(
        `${to} to be promoted`,
        async () => (await writableThroughProxy()) === to,
        120_000,
      );
      const writableMs = Date.now() - killedAt;
      if (!andRejoin) return { from, to, writableMs };
      await rejoin(from);
      return { from, to, writableMs, rejoinedMs: Date.now() - killedAt };
    },

    async switchover() {
      await waitHealthy();
      const from = (await primary())!;
      const to = members.find((x) => x.name !== from)!.name;
      const askedAt = Date.now();
      const answer = await rest(memberNamed(from), '/switchover', 'POST', {
        leader: from,
        candidate: to,
      });
      if (answer.status !== 200)
        throw failWith(`switchover refused: ${answer.status} ${answer.body}`);
      await poll(`${to} to take writes`, async () => (await writableThroughProxy()) === to, 60_000);
      const writableMs = Date.now() - askedAt;
      await waitHealthy();
      return { from, to, writableMs };
    },

    async timeline() {
      const leader = await poll('a primary', primary, 60_000);
      const answer = await rest(memberNamed(leader), '/patroni');
      const timeline = (JSON.parse(answer.body) as { timeline?: number }).timeline;
      if (typeof timeline !== 'number') throw new Error(`no timeline in ${answer.body}`);
      return timeline;
    },
  };
}

function pgUrl(port: number): string {
  return `postgres://${SUPERUSER.username}:${SUPERUSER.password}@127.0.0.1:${port}/postgres`;
}

function httpJson(
  port: number,
  path: string,
  method = 'GET',
  body?: unknown,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        timeout: 30_000,
        headers: payload
          ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
          : {},
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Every process whose working directory is `dir` or below it (PostgreSQL chdirs to its data
 *  directory; the others were started in the scratch directory). */
export function processesUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      if (cwd === dir || cwd.startsWith(`${dir}/`)) pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

function tryKill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function idsOf(name: string): { uid: number; gid: number } {
  const uid = Number(spawnSync('id', ['-u', name]).stdout.toString().trim());
  const gid = Number(spawnSync('id', ['-g', name]).stdout.toString().trim());
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) throw new Error(`no user ${name}`);
  return { uid, gid };
}

async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => {
    const address = s.address();
    return typeof address === 'object' && address ? address.port : 0;
  });
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/** Still running: neither exited nor killed by a signal. */
function running(child: ChildProcess | undefined): boolean {
  return child !== undefined && child.exitCode === null && child.signalCode === null;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
