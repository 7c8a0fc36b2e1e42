import { type RefusalCode, UrsaError, type ValidationIssue } from '../errors/index.js';

/** One line per issue: `<document>: <field path>: <reason>`, or `<document>: <reason>` for the whole. */
export function issueLines(document: string, issues: readonly ValidationIssue[]): string {
  return issues
    .map((issue) =>
      issue.path === '' ? `${document}: ${issue.message}` : `${document}: ${issue.path}: ${issue.message}`,
    )
    .join('\n');
}

/**
 * The error for a document that failed validation: `code`, a message listing every issue (see
 * {@link issueLines}), `field` = the first issue's path (when not the whole document) and the
 * structured `issues`.
 */
export function documentRefused(
  code: RefusalCode,
  document: string,
  issues: readonly ValidationIssue[],
): UrsaError {
  const field = issues[0]?.path;
  return new UrsaError(code, issueLines(document, issues), {
    ...(field === undefined || field === '' ? {} : { field }),
    issues,
  });
}
