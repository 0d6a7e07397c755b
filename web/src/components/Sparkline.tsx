/** A tiny SVG line chart: no chart library needed for one series of a few hundred points. */
export function Sparkline({ values, label }: { values: number[]; label: string }) {
  const width = 300;
  const height = 48;
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? width / (values.length - 1) : width;
  const points = values.map(
    (v, i) => `${(i * step).toFixed(1)},${(height - (v / max) * (height - 4) - 2).toFixed(1)}`,
  );
  return (
    <svg
      class="sparkline"
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label={label}
      preserveAspectRatio="none"
    >
      <title>{label}</title>
      {points.length > 1 ? <polyline points={points.join(' ')} /> : null}
    </svg>
  );
}
