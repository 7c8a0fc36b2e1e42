export { type ErrorCode, errorCatalogue } from './catalogue.js';
export { isUrsaError, UrsaError, type UrsaErrorDetails } from './ursa-error.js';
