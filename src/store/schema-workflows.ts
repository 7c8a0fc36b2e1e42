/* The workflow tables of the store's schema (`src/store/schema.ts`, issue #10). */

/** A workflow run (issue #10). Instants are UTC epoch ms. */
export interface WorkflowRunsTable {
  id: string;
  tenant: string;
  project: string;
  workflow: string;
  /** running | completed | failed | cancelled */
  status: string;
  /** JSON: the parameters after defaults. */
  params: string;
  /** The workflow document frozen at start. */
  document: string;
  run_as: string;
  session_id: string;
  correlation_id: string | null;
  worker_id: string | null;
  reason: string | null;
  created_at: number;
  ended_at: number | null;
  stop_requested_at: number | null;
}

/** One step of a workflow run (issue #10). */
export interface WorkflowStepsTable {
  run_id: string;
  position: number;
  name: string;
  recipe: string;
  /** pending | running | completed | failed | cancelled | skipped */
  status: string;
  process_id: string | null;
  output: string | null;
  reason: string | null;
  started_at: number | null;
  ended_at: number | null;
}
