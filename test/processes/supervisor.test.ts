// The supervisor's crash-loop backoff, with real child processes: a child that keeps dying soon
// after it starts waits twice as long before each restart (up to the cap), and one that lived
// past the healthy mark is restarted after the first step again.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  DEFAULT_RESTART_POLICY,
  restartDelay,
  Supervisor,
  type SupervisorEvents,
} from '../../src/processes/supervisor.js';

/**
 * A child that appends a line to LIVES_FILE and exits with code 3 after the life its start's
 * number picks from LIVES (ms, comma-separated; the last one repeats).
 */
const CHILD = `
const fs = require('node:fs');
fs.appendFileSync(process.env.LIVES_FILE, 'x\\n');
const n = fs.readFileSync(process.env.LIVES_FILE, 'utf8').split('\\n').length - 2;
const lives = process.env.LIVES.split(',').map(Number);
setTimeout(() => process.exit(3), lives[Math.min(n, lives.length - 1)]);
`;

async function superviseUntil(
  lives: number[],
  exits: number,
  policy: { delayMs: number; maxDelayMs: number; healthyAfterMs: number },
): Promise<SupervisorEvents['child:exited'][]> {
  const dir = await mkdtemp(join(tmpdir(), 'leasehold-supervisor-'));
  const supervisor = new Supervisor(
    { execPath: process.execPath, execArgv: ['-e', CHILD], entry: 'child' },
    policy,
  );
  const seen: SupervisorEvents['child:exited'][] = [];
  // The supervisor's restart timers do not hold the process open (its owner does): this does.
  const keepAlive = setInterval(() => {}, 1_000);
  try {
    await new Promise<void>((resolve) => {
      supervisor.events.on('child:exited', (e) => {
        seen.push(e);
        if (seen.length === exits) resolve();
      });
      supervisor.start({
        name: 'child',
        args: [],
        env: { LIVES_FILE: join(dir, 'lives'), LIVES: lives.join(',') },
      });
    });
    await supervisor.stop();
    const starts = (await readFile(join(dir, 'lives'), 'utf8')).split('\n').length - 1;
    assert.equal(starts, exits, 'the supervisor stopped restarting when stopped');
    return seen;
  } finally {
    clearInterval(keepAlive);
    await supervisor.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

describe('supervisor restarts', () => {
  it('doubles the wait after each short life up to the cap', () => {
    const policy = { delayMs: 500, maxDelayMs: 8_000, healthyAfterMs: 30_000 };
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5, 6].map((n) => restartDelay(policy, n)),
      [500, 500, 1_000, 2_000, 4_000, 8_000, 8_000],
    );
    assert.deepEqual(DEFAULT_RESTART_POLICY, policy);
  });

  it('backs off a child that keeps dying at once, and starts over after a healthy life', async () => {
    // The supervisor measures a life from spawn to exit, node's start-up included: a child that
    // exits at once can take seconds to do so on a busy machine, so the healthy mark is far
    // above that, and the healthy life only has to pass it (its own timer guarantees that).
    const policy = { delayMs: 20, maxDelayMs: 80, healthyAfterMs: 8_000 };
    // Four quick deaths, one life past the healthy mark, then quick deaths again.
    const seen = await superviseUntil([0, 0, 0, 0, 8_100, 0, 0], 7, policy);
    assert.deepEqual(
      seen.map((e) => e.restartInMs),
      [20, 40, 80, 80, 20, 20, 40],
    );
    assert.ok(seen.every((e) => e.code === 3 && e.restarting));
  });
});
