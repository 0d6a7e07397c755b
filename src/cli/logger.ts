import pino, { type Logger as Pino } from 'pino';
import type { Logger } from '../runtime/logger.js';

/**
 * The process logger: pretty lines in a terminal, JSON lines otherwise (for log shippers).
 * LEASEHOLD_LOG_LEVEL sets the level (default info).
 */
export function processLogger(name: string): Pino {
  const level = process.env.LEASEHOLD_LOG_LEVEL ?? 'info';
  return process.stdout.isTTY
    ? pino({
        name,
        level,
        transport: {
          target: 'pino-pretty',
          options: { translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' },
        },
      })
    : pino({ name, level });
}

/** pino already has the (fields, message) shape of our Logger seam. */
export function asLogger(log: Pino): Logger {
  return {
    debug: (fields, message) => log.debug(fields, message),
    info: (fields, message) => log.info(fields, message),
    warn: (fields, message) => log.warn(fields, message),
    error: (fields, message) => log.error(fields, message),
  };
}
