/**
 * Whether a scheduler with `pauseOnFailure: threshold` pauses now (issue #22), pure: `outcomes`
 * are the outcomes of its latest runs that ended `completed` or `failed` (newest first, since the
 * count last started over); it pauses when the newest `threshold` of them all failed. A completed
 * run ends a streak; runs skipped or cancelled neither count nor end one, since they say nothing
 * of whether the work succeeds.
 */
export function failureStreakReached(threshold: number, outcomes: readonly string[]): boolean {
  const newest = outcomes.slice(0, threshold);
  return newest.length === threshold && newest.every((outcome) => outcome === 'failed');
}
