/**
 * The logging seam. Library code logs through this interface so that it stays silent by
 * default and the service can plug in pino (whose method shape this matches: an object of
 * fields first, then the message).
 */
export interface Logger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

const noop = (): void => {};

export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };
