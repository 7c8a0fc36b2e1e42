/** Scheduler documents: the validated definition (spec §2) and its parser. */

export { type DurationResult, parseFixedDuration } from '../time/duration.js';
export * from './definition.js';
export {
  parseSchedulerDocument,
  type SchedulerDocumentOptions,
  type SchedulerValidation,
  schedulerFromObject,
  validateSchedulerDocument,
  validateSchedulerObject,
} from './document.js';
export { isValidName, NAME_PATTERN, NAME_RULE, validateName } from './name.js';
export { SCHEDULER_PREFIX, schedulerNameFromPath, schedulerPath } from './paths.js';
