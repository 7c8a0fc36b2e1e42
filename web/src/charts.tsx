import type { TimeZone } from '../../src/cron/index.js';
import { formatZoned } from '../../src/time/instant.js';
import type { RunSummary } from './api.js';
import { DAY_MS, type TimelineRow } from './cron-preview.js';
import { durationText, outcomeClass } from './format.js';

/**
 * The two pictures of issue #9: the next 24 hours of fires of every scheduler of the project,
 * and per scheduler its last runs' lateness and duration. Plain SVG; hovering a mark shows its
 * title, and each picture has its numbers in text beside it for keyboards and screen readers.
 */

const HOUR = 3_600_000;

export function Timeline({ rows, now, zone }: { rows: readonly TimelineRow[]; now: number; zone: TimeZone }) {
  const labelWidth = 160;
  const width = 1000;
  const rowHeight = 26;
  const top = 22;
  const height = top + Math.max(1, rows.length) * rowHeight + 4;
  const x = (t: number) => labelWidth + ((t - now) / DAY_MS) * (width - labelWidth - 10);
  const ticks: number[] = [];
  const firstHour = Math.ceil(now / HOUR) * HOUR;
  for (let t = firstHour; t < now + DAY_MS; t += 3 * HOUR) ticks.push(t);
  const totalDst = rows.reduce((n, r) => n + r.fires.filter((f) => f.dst).length, 0);
  return (
    <figure class="timeline">
      <figcaption>
        Next 24 hours of fires, in {zone.id}
        {totalDst > 0 && <span class="dst-badge"> ◆ {totalDst} fire time(s) touched by a DST change</span>}
      </figcaption>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: on a narrow screen the picture scrolls sideways, and a keyboard scrolls only what it can focus */}
      <section class="timeline-scroll" aria-label="Timeline (scrolls sideways)" tabIndex={0}>
        <svg
          viewBox={`0 0 ${width} ${height}`}
          role="img"
          aria-label={`Timeline of the next 24 hours: ${rows.map((r) => `${r.scheduler} ${r.total} fire(s)`).join(', ') || 'no schedulers'}`}
          preserveAspectRatio="xMinYMin meet"
        >
          {ticks.map((t) => (
            <g key={t}>
              <line x1={x(t)} x2={x(t)} y1={top - 4} y2={height} class="grid" />
              <text x={x(t)} y={14} class="tick" text-anchor="middle">
                {formatZoned(t, zone).slice(15, 20)}
              </text>
            </g>
          ))}
          {rows.map((row, i) => {
            const y = top + i * rowHeight + rowHeight / 2;
            const dense = row.total > row.fires.length || row.fires.length > 96;
            return (
              <g key={row.scheduler} class="row">
                <text x={4} y={y + 4} class="label">
                  {row.scheduler.length > 20 ? `${row.scheduler.slice(0, 19)}…` : row.scheduler}
                </text>
                <line x1={labelWidth} x2={width - 10} y1={y} y2={y} class="axis" />
                {dense ? (
                  <rect x={labelWidth} y={y - 6} width={width - labelWidth - 10} height={12} class="band">
                    <title>{`${row.scheduler}: ${row.total} fires in the next 24 hours (${row.description})`}</title>
                  </rect>
                ) : (
                  row.fires.map((f) =>
                    f.dst ? (
                      <path
                        key={f.instant}
                        d={`M ${x(f.instant)} ${y - 7} l 7 7 l -7 7 l -7 -7 z`}
                        class="fire dst"
                      >
                        <title>{`${row.scheduler} — ${formatZoned(f.instant, zone)} (touched by a DST change)`}</title>
                      </path>
                    ) : (
                      <circle key={f.instant} cx={x(f.instant)} cy={y} r={5} class="fire">
                        <title>{`${row.scheduler} — ${formatZoned(f.instant, zone)}`}</title>
                      </circle>
                    ),
                  )
                )}
              </g>
            );
          })}
        </svg>
      </section>
      <details>
        <summary>The same as a list</summary>
        <ul>
          {rows.map((row) => (
            <li key={row.scheduler}>
              <strong>{row.scheduler}</strong>: {row.total} fire(s)
              {row.fires.length > 0 &&
                `; next ${row.fires
                  .slice(0, 3)
                  .map((f) => `${formatZoned(f.instant, zone)}${f.dst ? ' (DST)' : ''}`)
                  .join(', ')}`}
            </li>
          ))}
        </ul>
      </details>
    </figure>
  );
}

export function RunChart({ runs }: { runs: readonly RunSummary[] }) {
  const shown = [...runs].reverse().filter((r) => r.startedAt !== null);
  if (shown.length === 0) return null;
  const lateness = shown.map((r) => Date.parse(r.startedAt as string) - Date.parse(r.scheduledFor));
  const durations = shown.map((r) => r.durationMs ?? 0);
  const width = 320;
  const half = 60;
  const bar = Math.max(4, Math.min(14, Math.floor((width - 40) / shown.length) - 2));
  const scale = (values: number[]) => {
    const max = Math.max(1, ...values.map((v) => Math.abs(v)));
    return (v: number) => Math.max(1, (Math.abs(v) / max) * (half - 14));
  };
  const lateScale = scale(lateness);
  const durScale = scale(durations);
  return (
    <figure class="run-chart">
      <figcaption>
        {shown.length === 1 ? 'Last run' : `Last ${shown.length} runs`}: lateness (top) and duration (bottom),
        coloured by outcome
      </figcaption>
      <svg
        viewBox={`0 0 ${width} ${half * 2 + 10}`}
        role="img"
        aria-label={`Lateness ${durationText(Math.min(...lateness))} to ${durationText(Math.max(...lateness))}; duration ${durationText(Math.min(...durations))} to ${durationText(Math.max(...durations))}`}
      >
        <text x={2} y={12} class="tick">
          late
        </text>
        <text x={2} y={half + 22} class="tick">
          took
        </text>
        <line x1={36} x2={width} y1={half} y2={half} class="axis" />
        <line x1={36} x2={width} y1={half * 2 + 8} y2={half * 2 + 8} class="axis" />
        {shown.map((r, i) => {
          const x = 40 + i * (bar + 2);
          const late = lateness[i] as number;
          const took = durations[i] as number;
          const cls = `bar ${outcomeClass(r.outcome)}`;
          return (
            <g key={r.correlationId}>
              <rect x={x} y={half - lateScale(late)} width={bar} height={lateScale(late)} class={cls}>
                <title>{`${r.scheduledFor}: ${r.outcome}, started ${durationText(late)} late`}</title>
              </rect>
              <rect x={x} y={half * 2 + 8 - durScale(took)} width={bar} height={durScale(took)} class={cls}>
                <title>{`${r.scheduledFor}: ${r.outcome}, took ${durationText(r.durationMs)}`}</title>
              </rect>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}
