export * from './catalogue.js';
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
