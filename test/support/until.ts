/**
 * Polls `condition` (a store query, say) until it holds, for work another task finishes in the
 * background. Not a timer for a fire: the clock of scheduling tests is stepped by the test.
 */
export async function until(condition: () => Promise<boolean> | boolean, what = 'condition'): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`${what} never held`);
}
