/**
 * One thing `ursa doctor` found (issue #26 item 4): which check, how bad, what it is and how to
 * fix it. `error`: Ursa will not work right until it is fixed (the command exits non-zero);
 * `warning`: likely a mistake, or a risk; `info`: worth knowing; `ok`: the check passed.
 */
export type Severity = 'error' | 'warning' | 'info' | 'ok';

/** The checks, in the order the report lists them. */
export const CHECKS = [
  'config',
  'environment',
  'store',
  'migrations',
  'permissions',
  'clock',
  'serving',
  'workers',
  'overdue',
] as const;
export type CheckName = (typeof CHECKS)[number];

export interface Finding {
  readonly check: CheckName;
  readonly severity: Severity;
  /** What was found, for an operator: names the path, value or worker it is about. */
  readonly message: string;
  /** The command or change that fixes it; null when there is nothing to do. */
  readonly fix: string | null;
}

/** A finding, `fix` null unless given. */
export function finding(check: CheckName, severity: Severity, message: string, fix?: string): Finding {
  return { check, severity, message, fix: fix ?? null };
}

/** How many findings of each severity. */
export function countBySeverity(findings: readonly Finding[]): Record<Severity, number> {
  const counts: Record<Severity, number> = { error: 0, warning: 0, info: 0, ok: 0 };
  for (const f of findings) counts[f.severity] += 1;
  return counts;
}

/** `90 s`, `3 min 20 s`, `2 h 5 min`, `3 d 4 h`: a span for a message, ms in, at most two units. */
export function span(ms: number): string {
  if (Math.abs(ms) < 1000) return `${Math.round(Math.abs(ms))} ms`;
  const s = Math.round(Math.abs(ms) / 1000);
  const units: [number, string][] = [
    [86_400, 'd'],
    [3_600, 'h'],
    [60, 'min'],
    [1, 's'],
  ];
  const parts: string[] = [];
  let rest = s;
  for (const [size, name] of units) {
    if (rest >= size && parts.length < 2) {
      parts.push(`${Math.floor(rest / size)} ${name}`);
      rest %= size;
    } else if (parts.length > 0) break;
  }
  return parts.join(' ');
}
