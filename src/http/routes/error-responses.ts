import { problemSchema } from '../../contract/index.js';

/**
 * The problem responses the OpenAPI document lists for a route (RFC 9457 bodies): what any
 * resource route may answer, and a conditional write's 412 (If-Match found another version,
 * issue #19).
 */
export const ERROR_RESPONSES = {
  400: problemSchema,
  401: problemSchema,
  403: problemSchema,
  404: problemSchema,
} as const;

/** {@link ERROR_RESPONSES} and 412 for a write with If-Match. */
export const WRITE_ERROR_RESPONSES = { ...ERROR_RESPONSES, 412: problemSchema } as const;
