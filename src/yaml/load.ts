import { isUrsaError, type UrsaError, type ValidationIssue } from '../errors/index.js';
import { parseYamlDocument } from './parse.js';

/** A loaded document, or why it could not be loaded. */
export type Loaded =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly issues: ValidationIssue[]; readonly error: UrsaError };

/**
 * {@link parseYamlDocument} without throwing for bad input: a `DOCUMENT_INVALID` error becomes
 * `{ ok: false }` with its one issue and the error itself. Any other error is rethrown.
 */
export function loadYamlDocument(text: string, source: string): Loaded {
  try {
    return { ok: true, value: parseYamlDocument(text, source) };
  } catch (error) {
    if (!isUrsaError(error, 'DOCUMENT_INVALID')) throw error;
    return { ok: false, issues: [...(error.issues ?? [])], error };
  }
}
