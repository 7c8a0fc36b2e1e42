/**
 * The `reason` of a run stopped through its abort signal: the abort reason when it is a string
 * (e.g. `cancelPrevious`), otherwise `stopped`.
 */
export function stopReason(signal: AbortSignal): string {
  return typeof signal.reason === 'string' ? signal.reason : 'stopped';
}
