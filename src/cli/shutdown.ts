/**
 * Resolves on the first SIGINT or SIGTERM: the moment a long-running command should wind down.
 *
 * Later signals are absorbed (and reported to `onRepeat`), not left to their default action,
 * which kills the process: a Ctrl-C reaches every process of the terminal's foreground group,
 * so a child of the demo gets the terminal's SIGINT and then its supervisor's SIGTERM, and an
 * impatient user presses Ctrl-C twice. Either would otherwise end the process in the middle of
 * handing its tasks back. The listeners stay for the life of the process, which is ending.
 *
 * A child of the demo supervisor (LEASEHOLD_SUPERVISED=1) also winds down when its stdin
 * closes: the supervisor holds the other end, so if it dies, even by SIGKILL, its children
 * notice at once instead of living on as orphans.
 */
export type ShutdownReason = NodeJS.Signals | 'parent-exited';

export interface ShutdownOptions {
  /**
   * Told of each signal after the first, while the shutdown runs, except within a second of the
   * first: those are the same Ctrl-C passed on by the programs in between (npm, tsx).
   */
  onRepeat?: (signal: NodeJS.Signals) => void;
}

const RELAYED_WITHIN_MS = 1_000;

export function untilShutdown(options: ShutdownOptions = {}): Promise<ShutdownReason> {
  return new Promise((resolve) => {
    let shuttingDownSince: number | undefined;
    const done = (reason: ShutdownReason): void => {
      if (shuttingDownSince !== undefined) return;
      shuttingDownSince = performance.now();
      process.stdin.off('end', onParentGone);
      process.stdin.off('close', onParentGone);
      resolve(reason);
    };
    const onSignal = (signal: NodeJS.Signals): void => {
      if (shuttingDownSince === undefined) done(signal);
      else if (performance.now() - shuttingDownSince >= RELAYED_WITHIN_MS)
        options.onRepeat?.(signal);
    };
    const onParentGone = (): void => done('parent-exited');
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    if (process.env.LEASEHOLD_SUPERVISED === '1') {
      process.stdin.on('end', onParentGone);
      process.stdin.on('close', onParentGone);
      process.stdin.resume();
    }
  });
}
