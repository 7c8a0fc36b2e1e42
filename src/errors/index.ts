export { type ErrorCode, type ErrorKind, errorCatalogue } from './catalogue.js';
export {
  isRefusal,
  isUrsaError,
  UrsaError,
  type UrsaErrorDetails,
  type ValidationIssue,
} from './ursa-error.js';
