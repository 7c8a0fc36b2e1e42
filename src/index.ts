/** Ursa's library API. See README.md; the cron engine is also available as `ursa/cron`. */
export * from './cron/index.js';
export * from './errors/index.js';
export * from './time/index.js';
