/** Numbers as the report prints them: rates and counts whole, milliseconds to 0.1, ratios to 0.01. */
export function formatValue(value: number, unit: string): string {
  if (!Number.isFinite(value)) return String(value);
  if (unit === 'ms') return value < 10 ? value.toFixed(2) : value.toFixed(1);
  if (unit === 'queries/s' || unit === 'connections') return value.toFixed(2);
  if (unit === '×') return value.toFixed(2);
  return Math.round(value).toLocaleString('en-US');
}
