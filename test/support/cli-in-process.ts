/** Runs the CLI in this process (runCli) and captures what it writes, for the CLI tests. */
import { Writable } from 'node:stream';
import { runCli } from '../../src/cli/main.js';

export interface CliAnswer {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function runCliCaptured(args: string[]): Promise<CliAnswer> {
  const out: string[] = [];
  const err: string[] = [];
  const sink = (into: string[]) =>
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        into.push(String(chunk));
        done();
      },
    });
  const code = await runCli(args, { out: sink(out), err: sink(err) });
  return { code, stdout: out.join(''), stderr: err.join('') };
}
