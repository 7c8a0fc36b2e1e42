export { type AtForm, type AtInstant, parseAt } from './at.js';
export { type Clock, fixedClock, systemClock } from './clock.js';
export { formatInstant, formatOffset, formatZoned, parseInstant } from './instant.js';
export { type OffsetPeriod, TimeZone, timeZone } from './zone.js';
