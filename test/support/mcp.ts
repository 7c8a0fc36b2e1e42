/** The structured output of an MCP tool result; fails the test when the tool answered with an error. */
export function structured(result: unknown): Record<string, unknown> {
  const r = result as {
    isError?: boolean;
    structuredContent?: Record<string, unknown>;
    content?: { text: string }[];
  };
  if (r.isError) throw new Error(`tool error: ${r.content?.[0]?.text}`);
  return r.structuredContent as Record<string, unknown>;
}
