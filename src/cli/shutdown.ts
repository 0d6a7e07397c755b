/**
 * Resolves on the first SIGINT or SIGTERM: the moment a long-running command should wind down.
 *
 * A child of the demo supervisor (LEASEHOLD_SUPERVISED=1) also winds down when its stdin
 * closes: the supervisor holds the other end, so if it dies, even by SIGKILL, its children
 * notice at once instead of living on as orphans.
 */
export type ShutdownReason = NodeJS.Signals | 'parent-exited';

export function untilShutdown(): Promise<ShutdownReason> {
  return new Promise((resolve) => {
    const done = (reason: ShutdownReason): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      process.stdin.off('end', onParentGone);
      process.stdin.off('close', onParentGone);
      resolve(reason);
    };
    const onSignal = (signal: NodeJS.Signals): void => done(signal);
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
