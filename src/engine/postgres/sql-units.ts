/** Multiplies a float8 count of milliseconds into an interval: `$4::float8 ${MS}`. */
export const MS = "* interval '1 millisecond'";
