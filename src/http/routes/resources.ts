import type { FastifyInstance } from 'fastify';
import type { AppOptions } from '../app.js';

/**
 * Runs by correlationId, documents, processes, the inbox and tenant refresh (issue #7).
 * Filled in by the resource routes; kept apart from the scheduler endpoints of spec §10.
 */
export async function resourceRoutes(_app: FastifyInstance, _options: AppOptions): Promise<void> {}
