export { type ErrorCode, errorCatalogue } from './catalogue.js';
export { isUrsaError, UrsaError, type UrsaErrorDetails, type ValidationIssue } from './ursa-error.js';
