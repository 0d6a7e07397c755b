/**
 * A small SVG line chart for the trends: a few series over the same points, a gap where a value
 * is null, a zero baseline and the top of the scale labelled. Hand-drawn, like Sparkline: a
 * chart library would outweigh the whole app.
 */
export interface ChartSeries {
  name: string;
  values: (number | null)[];
  /** A CSS class giving the line its colour (`line-1` … `line-3`). */
  tone: string;
}

const WIDTH = 600;
const HEIGHT = 140;
const PAD_TOP = 14;
const PAD_BOTTOM = 4;

/** Polyline point lists of a series, split where a value is missing. */
function segments(values: (number | null)[], max: number): string[] {
  const step = values.length > 1 ? WIDTH / (values.length - 1) : WIDTH;
  const plotted = HEIGHT - PAD_TOP - PAD_BOTTOM;
  const out: string[] = [];
  let current: string[] = [];
  values.forEach((v, i) => {
    if (v === null) {
      if (current.length) out.push(current.join(' '));
      current = [];
      return;
    }
    const y = HEIGHT - PAD_BOTTOM - (v / max) * plotted;
    current.push(`${(i * step).toFixed(1)},${y.toFixed(1)}`);
  });
  if (current.length) out.push(current.join(' '));
  return out;
}

export function LineChart({
  id,
  title,
  series,
  format,
}: {
  id: string;
  title: string;
  series: ChartSeries[];
  format: (value: number) => string;
}) {
  const all = series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  const max = Math.max(1e-9, ...all);
  const latest = series.map((s) => {
    const last = [...s.values].reverse().find((v) => v !== null);
    return `${s.name} ${last === undefined || last === null ? '–' : format(last)}`;
  });
  return (
    <figure class="chart" data-testid={`chart-${id}`}>
      <figcaption>
        <span class="chart-title">{title}</span>
        <span class="chart-legend">
          {series.map((s, i) => (
            <span key={s.name} class={`legend ${s.tone}`}>
              {latest[i]}
            </span>
          ))}
        </span>
      </figcaption>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={`${title}: now ${latest.join(', ')}; highest ${all.length ? format(max) : 'none'}`}
        preserveAspectRatio="none"
      >
        <line class="axis" x1="0" y1={HEIGHT - PAD_BOTTOM} x2={WIDTH} y2={HEIGHT - PAD_BOTTOM} />
        <line class="grid" x1="0" y1={PAD_TOP} x2={WIDTH} y2={PAD_TOP} />
        {series.map((s) =>
          segments(s.values, max).map((points, i) => (
            <polyline
              key={`${s.name}-${i}`}
              // A point alone (one minute with figures) is drawn as a round dot: a line of no length.
              class={`line ${s.tone}${points.includes(' ') ? '' : ' dot'}`}
              points={points.includes(' ') ? points : `${points} ${points}`}
              data-series={s.name}
            />
          )),
        )}
      </svg>
      <div class="chart-scale muted" aria-hidden="true">
        max {all.length ? format(max) : '–'}
      </div>
      <data
        class="chart-values"
        hidden
        value={series.map((s) => `${s.name}:${s.values.map((v) => v ?? '').join(',')}`).join(';')}
      />
    </figure>
  );
}
