import type { z } from 'zod';
import type { AgentScope } from './agent-scope.js';

/** `default` tools for every agent; `admin` tools only for admin identities (spec §9). */
export type Toolset = 'default' | 'admin';

/** One agent tool: JSON-schema input and output (from zod), a description for a language model, a handler. */
export interface ToolDefinition<I extends z.ZodObject, O extends z.ZodObject> {
  readonly name: string;
  readonly toolset: Toolset;
  /** `read-only`, `write` or `admin` (spec §9 labels). */
  readonly label: 'read-only' | 'write' | 'admin';
  readonly description: string;
  readonly input: I;
  readonly output: O;
  /**
   * Gets the project only through the agent's {@link AgentScope} (no runtime, no store), so what it
   * returns has passed the lock-mode filter of spec §10b whatever it does.
   */
  readonly handler: (scope: AgentScope, input: z.infer<I>) => Promise<z.infer<O>>;
}

/** A tool of any input and output, as the toolset lists them. */
export type AnyTool = Omit<ToolDefinition<z.ZodObject, z.ZodObject>, 'handler'> & {
  readonly handler: (scope: AgentScope, input: never) => Promise<unknown>;
};

/** A tool, typed by its input and output schemas. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(
  tool: ToolDefinition<I, O>,
): ToolDefinition<I, O> {
  return tool;
}
