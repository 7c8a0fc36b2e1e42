import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { answerBody, answerResultSchema, inboxItemParams, problemSchema } from '../../contract/index.js';
import { answerQuestion } from '../../service/inbox-answers.js';
import type { AppOptions } from '../app.js';
import { tenantCallerFor } from '../auth.js';
import { ERROR_RESPONSES } from './error-responses.js';
import { whose } from './resources.js';

/**
 * `POST /brain/{tenant}/inbox/{id}/answer` (issue #25): the answer to a question a blocked agent
 * run asked in its `runAs` user's inbox, delivered to its service by a worker's next pass. As the
 * other inbox routes: the token's user's item, or another user's with `user` and the admin role.
 */
export async function inboxAnswerRoutes(app: FastifyInstance, options: AppOptions): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post(
    '/brain/:tenant/inbox/:id/answer',
    {
      schema: {
        tags: ['inbox'],
        summary: "Answer a question an agent run asked in the user's inbox; it reaches the agent service",
        params: inboxItemParams,
        body: answerBody,
        response: { 200: answerResultSchema, ...ERROR_RESPONSES, 409: problemSchema },
      },
    },
    async (request) => {
      const { tenant, id } = request.params;
      const caller = tenantCallerFor(request, tenant, 'write');
      const user = whose(caller, request.body.user);
      return answerQuestion(options.rt, tenant, user, id, request.body.answer, caller.user);
    },
  );
}
