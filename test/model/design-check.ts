/**
 * The formal model's check of the design a chaos run exercises, for `npm run chaos`: the instance
 * of spec/leasehold.qnt with the run's replication (epoch tokens with the quarantine; one server
 * is modelled as synchronous replication, whose failover loses nothing), with every invariant,
 * on the seed and settings the tests use. The chaos run checks the code; this checks the design
 * the code follows, in the same command.
 */
import type { ReplicationMode } from '../chaos/history.js';
import { simulate } from './quint-run.js';

export const DESIGN_INVARIANTS = [
  'tokensStrictlyIncrease',
  'oneHolderTrusts',
  'supersededWriteRefused',
  'deadlineWithinGrantedExpiry',
];

export interface DesignCheck {
  ok: boolean;
  line: string;
}

export async function checkDesign(replication: ReplicationMode | undefined): Promise<DesignCheck> {
  const main = replication === 'async' ? 'epochQuarantineAsync' : 'epochQuarantineSync';
  const samples = 300;
  const result = await simulate({
    main,
    invariants: DESIGN_INVARIANTS,
    seed: 1,
    maxSamples: samples,
    maxSteps: 15,
  });
  const ok = result.exitCode === 0 && result.violated.length === 0;
  const verdict = ok
    ? 'no invariant violated'
    : result.violated.length > 0
      ? `violated: ${result.violated.join(', ')}`
      : `quint failed (exit ${result.exitCode}): ${result.output.trim().split('\n').slice(-3).join(' | ')}`;
  return {
    ok,
    line: `model: ${main}, ${samples} traces of up to 15 steps, seed 1: ${verdict} (${(result.elapsedMs / 1000).toFixed(1)} s)`,
  };
}
