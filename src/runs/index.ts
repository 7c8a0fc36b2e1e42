/**
 * The run lifecycle (spec §5, §9a; decisions §4, §5): a run's states as a union keyed by `state`,
 * its outcomes and end reasons as const objects, and the pure transitions between the states.
 * Imports no I/O: the store records these values, the runtime decides when.
 */
export * from './outcomes.js';
export type * from './run.js';
export * from './transitions.js';
