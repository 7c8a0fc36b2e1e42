/**
 * Ursa's cron engine: Spring/Quartz six-field expressions evaluated in IANA zones with the
 * daylight-saving rule of decisions §3. Pure: no I/O, no clock; every instant is an argument.
 */

export { type OffsetPeriod, TimeZone, timeZone } from '../time/zone.js';
export { type DstEffect, type DstNote, dstNotes } from './dst-preview.js';
export { CronExpression } from './expression.js';
export { neverFiresReason, parseCron } from './parse.js';
export { nextFireTime, nextFireTimes, previousFireTime } from './schedule.js';
