import { z } from 'zod';

/**
 * `GET …/me` (issue #23): who the token acts as in the project, and the display zone that applies
 * to that user (user setting → profile → tenant → UTC) with the level it came from (`default`
 * when nothing is set), so a page shows times in the user's zone.
 */
export const meSchema = z.object({
  tenant: z.string(),
  project: z.string(),
  user: z.string(),
  role: z.enum(['read', 'write', 'admin']),
  displayTimezone: z.object({
    value: z.string().describe('An IANA zone id'),
    from: z.string().describe('The level it came from: `default`, `setting user/<name>`, …'),
  }),
});
