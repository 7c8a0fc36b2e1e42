import type { DoctorFacts } from './facts.js';
import { CHECKS, type Finding, finding } from './finding.js';
import { judgeClock, judgeOverdue, judgeServing, judgeWorkers } from './judge-runtime.js';
import { judgeConfig, judgePaths, judgeStore, judgeStrayVariables } from './judge-setup.js';

/**
 * Every finding of `ursa doctor` (issue #26 item 4) from `facts`, judged at `now` (UTC ms), pure:
 * the same facts and instant give the same findings. Ordered by {@link CHECKS}. A check whose facts
 * are missing (the store was not reached, its schema is behind) says what it did not look at.
 */
export function diagnose(facts: DoctorFacts, now: number): Finding[] {
  const out: Finding[] = [...judgeConfig(facts.config), ...judgeStrayVariables(facts.strayVariables)];
  if (facts.store === undefined) {
    out.push(finding('store', 'info', 'the store was not checked: the configuration names no valid store'));
  } else {
    out.push(...judgeStore(facts.store));
  }
  if (facts.paths !== undefined) out.push(...judgePaths(facts.paths));
  const threshold = facts.config.valid ? facts.config.misfireThresholdMs : undefined;
  if (facts.clock !== undefined && threshold !== undefined) out.push(...judgeClock(facts.clock, threshold));
  if (facts.runtime !== undefined && threshold !== undefined) {
    out.push(
      ...judgeServing(facts.runtime, now),
      ...judgeWorkers(facts.runtime, now),
      ...judgeOverdue(facts.runtime, now, threshold),
    );
  } else if (facts.store?.state === 'open') {
    out.push(
      finding(
        'workers',
        'info',
        'workers, leases and overdue schedulers were not checked: the store is not migrated',
      ),
    );
  }
  return out.sort((a, b) => CHECKS.indexOf(a.check) - CHECKS.indexOf(b.check));
}

/** `ursa doctor`'s exit code for `findings`: 1 when any is an error, else 0 (warnings pass). */
export function doctorExitCode(findings: readonly Finding[]): 0 | 1 {
  return findings.some((f) => f.severity === 'error') ? 1 : 0;
}
