/**
 * A validated workflow (`_vance/workflows/<name>.yaml`, issue #10, decisions §2): parameters and
 * ordered steps, each a recipe run. Step params may hold references (`${{ params.x }}`,
 * `${{ steps.fetch.output }}`), rendered when the step starts (`template.ts`).
 */
export interface WorkflowDefinition {
  readonly name: string;
  readonly description: string;
  /** Parameter name → default; `null` for a parameter every start must give. */
  readonly parameters: Readonly<Record<string, unknown>>;
  readonly steps: readonly WorkflowStep[];
}

/** One step: an agent task run as a process of `recipe`, with `params` merged over the recipe's. */
export interface WorkflowStep {
  readonly name: string;
  readonly recipe: string;
  readonly params: Readonly<Record<string, unknown>>;
  readonly initialMessage?: string | undefined;
}
