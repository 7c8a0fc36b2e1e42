/** Safe YAML loading (decisions §6) and the issue reporting every document validator shares. */
export { appendField, fieldPath } from './field-path.js';
export { describeValue, fromZodIssues, issueMessage, sortIssues } from './issues.js';
export { MAX_ALIASES, MAX_DEPTH, MAX_DOCUMENT_BYTES } from './limits.js';
export { type Loaded, loadYamlDocument } from './load.js';
export { parseYamlDocument } from './parse.js';
export { documentRefused, issueLines } from './report.js';
