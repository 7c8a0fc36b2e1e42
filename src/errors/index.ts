export {
  type ErrorCode,
  type ErrorKind,
  errorCatalogue,
  type InfrastructureCode,
  type RefusalCode,
} from './catalogue.js';
export {
  errorOfCode,
  type InfrastructureDetails,
  InfrastructureError,
  isRefusal,
  isUrsaError,
  UrsaError,
  type UrsaErrorDetails,
  type ValidationIssue,
} from './ursa-error.js';
