import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { didYouMean } from '../errors/did-you-mean.js';
import { type ErrorCode, errorCatalogue, UrsaError, type ValidationIssue } from '../errors/index.js';
import { schemaFieldsAt } from '../yaml/issues.js';

/** Longest path segment (a tenant, project or scheduler name, an id) the router hands to a route. */
export const MAX_PARAM_LENGTH = 1024;

/** An RFC 9457 problem document, with Ursa's stable `code` and, for validation, every field path. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly code: ErrorCode;
  readonly detail: string;
  readonly errors?: readonly ValidationIssue[];
  /** What would have been accepted, when the error says (e.g. `1-5`). */
  readonly allowed?: string;
}

/** `about:blank`-style type URIs that point at the documented code (docs/errors.md). */
function typeOf(code: ErrorCode): string {
  return `https://ursa.dev/errors#${code.toLowerCase()}`;
}

/**
 * The problem document of an error; nothing of a driver's text or a stack ever goes in. `schemas`
 * (the route's, by part: `body`, `querystring`, …) name the near miss of an unknown field.
 */
export function problemOf(error: unknown, schemas?: Readonly<Record<string, unknown>>): Problem {
  if (error instanceof UrsaError) {
    return {
      type: typeOf(error.code),
      title: error.code,
      status: error.status,
      code: error.code,
      detail: error.message,
      ...(error.allowed === undefined ? {} : { allowed: error.allowed }),
      ...(error.issues === undefined
        ? error.field === undefined
          ? {}
          : { errors: [{ path: error.field, message: error.message }] }
        : { errors: error.issues }),
    };
  }
  const fastifyError = error as FastifyError & { validation?: unknown };
  if (hasZodFastifySchemaValidationErrors(fastifyError)) {
    const where = fastifyError.validationContext ?? 'body';
    const schema = schemas?.[where] as z.ZodType | undefined;
    const errors = fastifyError.validation.flatMap((issue) =>
      fieldIssues(where, issue.instancePath, issue.keyword, issue.message, issue.params, schema),
    );
    return problem(
      'VALIDATION_FAILED',
      `the ${where} does not match the schema: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
      errors,
    );
  }
  // The router's refusals: their own text would repeat the whole path, so only the reason goes out.
  if (fastifyError.code === 'FST_ERR_BAD_URL')
    return problem('VALIDATION_FAILED', 'the URL path is malformed (e.g. a bad percent-encoding)', [
      { path: 'url', message: 'malformed: every % must start a valid UTF-8 percent-encoding' },
    ]);
  if (fastifyError.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return problem(
      'VALIDATION_FAILED',
      `a segment of the URL path is longer than ${MAX_PARAM_LENGTH} characters; a name is at most 128`,
      [{ path: 'url', message: `a path segment is longer than ${MAX_PARAM_LENGTH} characters` }],
    );
  const status = fastifyError.statusCode;
  if (status === 413)
    return problem('VALIDATION_FAILED', 'the request body is too large', [
      { path: 'body', message: 'too large' },
    ]);
  if (status === 415)
    return problem(
      'VALIDATION_FAILED',
      'the content type is not supported: send application/json or application/yaml',
      [{ path: 'content-type', message: 'not supported' }],
    );
  if (status === 400)
    return problem('VALIDATION_FAILED', 'the request is malformed (e.g. the JSON does not parse)', [
      { path: 'body', message: 'malformed' },
    ]);
  if (status === 404) return problem('NOT_FOUND', 'no such resource');
  return problem('INTERNAL', 'an internal error occurred; the server log has the details');
}

interface ZodIssueLike {
  readonly code?: string;
  readonly path?: readonly PropertyKey[];
  readonly message?: string;
  readonly keys?: readonly string[];
  readonly errors?: readonly (readonly ZodIssueLike[])[];
}

/**
 * Field paths of one schema issue: an unknown key is named in the path (`body.extra`), with the
 * field it likely is when `schema` has one near it (`body.yml`: did you mean "yaml"?, issue #23),
 * and a union (YAML text or `{yaml}`) reports the issues of its closest branch rather than the union.
 */
function fieldIssues(
  where: string,
  instancePath: string,
  code: string | undefined,
  message: string | undefined,
  params: unknown,
  schema?: z.ZodType,
): ValidationIssue[] {
  const parts = instancePath.split('/').filter((part) => part !== '');
  const at = [where, ...parts];
  const details = (params ?? {}) as ZodIssueLike;
  if (code === 'unrecognized_keys' && Array.isArray(details.keys)) {
    const segments = parts.map((part) => (/^\d+$/.test(part) ? Number(part) : part));
    const allowed = (schema && schemaFieldsAt(schema, segments)) ?? [];
    return details.keys.map((key) => ({
      path: [...at, key].join('.'),
      message: `unknown field${didYouMean(key, allowed)}`,
    }));
  }
  if (code === 'invalid_union' && Array.isArray(details.errors) && details.errors.length > 0) {
    // The branch that got deepest into the value is the one the caller most likely meant.
    const depth = (issues: readonly ZodIssueLike[]) => Math.max(0, ...issues.map((i) => i.path?.length ?? 0));
    const branch = [...details.errors].sort((a, b) => depth(b) - depth(a))[0] ?? [];
    const nested = branch.flatMap((i: ZodIssueLike) =>
      fieldIssues(
        where,
        `${instancePath}/${(i.path ?? []).map(String).join('/')}`,
        i.code,
        i.message,
        i,
        schema,
      ),
    );
    if (nested.length > 0) return nested;
  }
  return [{ path: at.join('.'), message: message ?? 'is invalid' }];
}

function problem(code: ErrorCode, detail: string, errors?: readonly ValidationIssue[]): Problem {
  return {
    type: typeOf(code),
    title: code,
    status: errorCatalogue[code].status,
    code,
    detail,
    ...(errors === undefined ? {} : { errors }),
  };
}

/** Fastify error handler: every error leaves as `application/problem+json` (RFC 9457). */
export function sendProblem(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const body = problemOf(error, request.routeOptions.schema as Readonly<Record<string, unknown>> | undefined);
  if (body.status >= 500) request.log.error({ err: error }, 'request failed');
  void reply.status(body.status).type('application/problem+json').send(body);
}
