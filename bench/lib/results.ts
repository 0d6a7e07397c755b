/**
 * Every sample of a run, the ratios between them and the figures worth naming on their own.
 * A measurement is one number per round (jobs/s, a p99 in ms…); it is summarised as the median
 * and min–max of its rounds. A ratio is always leasehold ÷ the other system, one named
 * measurement on each side (never the best of several against one): its value is median over
 * median, and beside it the ratio of each round (round i ÷ round i, the systems ran in turn in
 * the same round) gives its spread and in how many rounds a target was met. A target counts as
 * met only when the median meets it.
 */
import { summary } from './stats.js';

export type Better = 'higher' | 'lower';

export interface MeasurementSpec {
  /** `family.system[.metric]`, e.g. `burnDown.graphile.fast`. */
  readonly id: string;
  readonly family: string;
  readonly label: string;
  readonly unit: string;
  readonly better: Better;
}

export interface Measurement extends MeasurementSpec {
  readonly samples: number[];
  readonly notes: string[];
}

export interface Target {
  readonly op: '>=' | '<=';
  readonly value: number;
}

export interface RatioSpec {
  /** The key in latest.json's `ratios`, e.g. `burnDownVsGraphile`. */
  readonly key: string;
  readonly label: string;
  readonly numerator: string;
  readonly denominator: string;
  readonly target?: Target;
}

/** An absolute figure held against a target (the idle herd's queries per second). */
export interface CheckSpec {
  readonly key: string;
  readonly label: string;
  readonly measurement: string;
  readonly target: Target;
}

export interface Summary {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export interface RatioResult {
  readonly key: string;
  readonly label: string;
  readonly numerator: string;
  readonly denominator: string;
  readonly value: number;
  /** The ratio of each round that measured both sides, in round order. */
  readonly rounds: number[];
  readonly min: number;
  readonly max: number;
  readonly target?: Target;
  /** Whether the median meets the target. */
  readonly met?: boolean;
  /** Rounds whose own ratio meets the target. */
  readonly metRounds?: number;
}

export function meets(value: number, target: Target): boolean {
  return target.op === '>=' ? value >= target.value : value <= target.value;
}

export class ResultSet {
  private readonly measurements = new Map<string, Measurement>();
  private readonly ratioSpecs: RatioSpec[] = [];
  private readonly checkSpecs: CheckSpec[] = [];
  readonly figures: Record<string, unknown> = {};

  define(spec: MeasurementSpec): void {
    if (!this.measurements.has(spec.id))
      this.measurements.set(spec.id, { ...spec, samples: [], notes: [] });
  }

  add(id: string, value: number, note?: string): void {
    const m = this.measurements.get(id);
    if (!m) throw new Error(`measurement ${id} was never defined`);
    m.samples.push(value);
    if (note) m.notes.push(note);
  }

  ratio(spec: RatioSpec): void {
    this.ratioSpecs.push(spec);
  }

  check(spec: CheckSpec): void {
    this.checkSpecs.push(spec);
  }

  inFamily(family: string): Measurement[] {
    return [...this.measurements.values()].filter((m) => m.family === family);
  }

  all(): Measurement[] {
    return [...this.measurements.values()];
  }

  summary(id: string): Summary | undefined {
    const m = this.measurements.get(id);
    return m && m.samples.length > 0 ? summary(m.samples) : undefined;
  }

  /** The measurement among `ids` with the best median (by its own `better`). */
  best(ids: string | readonly string[]): { id: string; median: number } | undefined {
    let best: { id: string; median: number } | undefined;
    for (const id of typeof ids === 'string' ? [ids] : ids) {
      const s = this.summary(id);
      const m = this.measurements.get(id);
      if (!s || !m) continue;
      const better =
        m.better === 'higher'
          ? s.median > (best?.median ?? -Infinity)
          : s.median < (best?.median ?? Infinity);
      if (better) best = { id, median: s.median };
    }
    return best;
  }

  ratios(): RatioResult[] {
    const out: RatioResult[] = [];
    for (const spec of this.ratioSpecs) {
      const top = this.measurements.get(spec.numerator);
      const bottom = this.measurements.get(spec.denominator);
      const topSummary = this.summary(spec.numerator);
      const bottomSummary = this.summary(spec.denominator);
      if (!top || !bottom || !topSummary || !bottomSummary || bottomSummary.median === 0) continue;
      const value = topSummary.median / bottomSummary.median;
      const rounds = top.samples
        .slice(0, bottom.samples.length)
        .map((t, i) => t / bottom.samples[i]!)
        .filter((r) => Number.isFinite(r));
      const spread = rounds.length > 0 ? summary(rounds) : { min: value, max: value };
      out.push({
        key: spec.key,
        label: spec.label,
        numerator: spec.numerator,
        denominator: spec.denominator,
        value,
        rounds,
        min: spread.min,
        max: spread.max,
        ...(spec.target
          ? {
              target: spec.target,
              met: meets(value, spec.target),
              metRounds: rounds.filter((r) => meets(r, spec.target!)).length,
            }
          : {}),
      });
    }
    return out;
  }

  checks(): {
    key: string;
    label: string;
    measurement: string;
    unit: string;
    value: number;
    /** Rounds whose own figure meets the target, of `rounds`. */
    metRounds: number;
    rounds: number;
    target: Target;
    met: boolean;
  }[] {
    return this.checkSpecs.flatMap((spec) => {
      const s = this.summary(spec.measurement);
      const m = this.measurements.get(spec.measurement);
      if (!s || !m) return [];
      return [
        {
          ...spec,
          unit: m.unit,
          value: s.median,
          metRounds: m.samples.filter((v) => meets(v, spec.target)).length,
          rounds: m.samples.length,
          met: meets(s.median, spec.target),
        },
      ];
    });
  }
}
