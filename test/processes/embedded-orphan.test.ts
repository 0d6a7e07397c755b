// A program that started an embedded PostgreSQL and dies without stopping it (SIGKILL, a crash,
// a second Ctrl-C under a shell that gives up) leaves no postmaster behind: the server's
// guardian sees the program go and stops it, and removes the data directory of a throwaway
// cluster. Before the guardian, the postmaster lived on as an orphan holding its port and data.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startScript } from '../support/cli-process.js';
import { waitFor } from '../support/wait.js';
import { isAlive } from '../support/pids.js';

const FIXTURE = new URL('./fixtures/embedded-server.ts', import.meta.url).pathname;

/** Starts a server from a child process, SIGKILLs the child, waits for the postmaster to go. */
async function killOwner(dataDir: string, persistent: boolean): Promise<void> {
  const owner = startScript(FIXTURE, [], {
    DATA_DIR: dataDir,
    PERSISTENT: persistent ? '1' : '0',
  });
  let postmaster: number | undefined;
  try {
    const [line] = await owner.waitForLine(/^\{"ready":true.*\}$/, 120_000);
    postmaster = (JSON.parse(line) as { postmaster: number }).postmaster;
    assert.ok(isAlive(postmaster), 'the server runs');
    owner.kill('SIGKILL');
    await owner.exited();
    // The guardian's fast shutdown takes a moment on a loaded machine: a generous bound from
    // this test's own clock, the event being waited for is the postmaster's exit.
    await waitFor('the postmaster to stop after its owner died', () => !isAlive(postmaster!), {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
  } finally {
    owner.kill('SIGKILL');
    if (postmaster !== undefined && isAlive(postmaster)) process.kill(postmaster, 'SIGKILL');
  }
}

async function inScratchDir(fn: (dataDir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'leasehold-orphan-'));
  // The server runs as the unprivileged `postgres` user, which must be able to enter the directory.
  await chmod(dir, 0o755);
  try {
    await fn(join(dir, 'data'));
  } finally {
    await rm(dir, { recursive: true, force: true, maxRetries: 5 }).catch(() => {});
  }
}

describe('embedded PostgreSQL outliving its program', () => {
  it('a throwaway cluster: the postmaster stops and its data directory is removed', () =>
    inScratchDir(async (dataDir) => {
      await killOwner(dataDir, false);
      await waitFor('the throwaway data directory to go', () => !existsSync(dataDir), {
        timeoutMs: 30_000,
        intervalMs: 100,
      });
    }));

  it('a kept cluster: the postmaster stops and its data stays for the next start', () =>
    inScratchDir(async (dataDir) => {
      await killOwner(dataDir, true);
      assert.ok(existsSync(join(dataDir, 'PG_VERSION')), 'the cluster is still there');
      assert.equal(existsSync(join(dataDir, 'postmaster.pid')), false, 'and was shut down cleanly');
    }));
});
