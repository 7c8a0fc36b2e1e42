import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Ursa's structured log (pino, JSON lines). `destination` defaults to standard output; pass a
 * stream to capture it, or level `silent` to drop it.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'ursa' }, timestamp: pino.stdTimeFunctions.isoTime };
  return destination === undefined ? pino(options) : pino(options, destination);
}

export type { Logger };
