/**
 * `promtool check metrics` (Debian package `prometheus`) on an exposition text. A test that
 * lints with it skips with `PROMTOOL_SKIP` as its reason when promtool is absent outside CI;
 * under CI=true it runs and fails without promtool (`.ci/run` installs it).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const PROMTOOL = '/usr/bin/promtool';

export const PROMTOOL_SKIP: string | false =
  !existsSync(PROMTOOL) && process.env.CI !== 'true'
    ? 'promtool is not installed (apt-get install prometheus); under CI=true this test fails instead'
    : false;

/** promtool's lint of `text`: its exit status and everything it said. */
export function promtoolCheck(text: string): { status: number | null; said: string } {
  if (!existsSync(PROMTOOL))
    throw new Error(`${PROMTOOL} is missing under CI=true (apt-get install prometheus)`);
  const run = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (run.error) throw run.error;
  return { status: run.status, said: `${run.stdout}${run.stderr}`.trim() };
}
