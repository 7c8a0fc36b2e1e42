/**
 * The lines of a worker bench's report that say what it ran on: PostgreSQL's version, where the
 * server came from and its durability settings, SQLite's version (each only if it ran).
 */
export function storeLines(report) {
  const lines = [];
  if (report.postgres !== undefined) {
    const { version, source, settings } = report.postgres;
    lines.push(
      `PostgreSQL ${version.split(' ')[0]} (${source}; fsync ${settings.fsync}, synchronous_commit ` +
        `${settings.synchronous_commit}); a fresh database per configuration`,
    );
  }
  if (report.sqlite !== undefined)
    lines.push(`SQLite ${report.sqlite.version}: a fresh file in a temp folder`);
  return lines;
}

/** The machine's load average before and after a bench, and how long its scenario took. */
export function loadLine(report) {
  return (
    `load average (1/5/15 min) before ${report.loadAverage.before.map((l) => l.toFixed(2)).join(' ')}, ` +
    `after ${report.loadAverage.after.map((l) => l.toFixed(2)).join(' ')}; scenario ${report.seconds.toFixed(0)} s`
  );
}
