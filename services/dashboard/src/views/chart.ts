/**
 * Server-rendered stacked bar charts as inline SVG: no script, no CDN, nothing for the CSP to
 * allow. Colours are presentation attributes (an inline `style` would need 'unsafe-inline'). Each
 * chart names itself (`<title>`, `<desc>`) and the page carries the same numbers as a table.
 *
 * Labels stay legible when the chart shrinks to a 375 px phone (the viewBox scales by about 0.55
 * there): the stylesheet doubles their font size on narrow screens, so the layout leaves room for
 * that size. Axis values are compact ("1.5K"), so they fit the left margin; day labels are one a
 * week, counted back from today, whose label ends at the right edge instead of overflowing it.
 */
import { plural } from '@subx/errors';
import type { Html } from './html.ts';
import { html } from './html.ts';
import { dayText } from './dates.ts';
import type { UsageDay } from '../gateway/client.ts';

/** Colour-blind-safe palette (Okabe–Ito), one per operation, in a fixed order. */
const OPERATION_COLOURS: Record<string, string> = {
  extract: '#0072B2',
  batch: '#E69F00',
  playlist: '#009E73',
  summarize: '#CC79A7',
  comments: '#D55E00',
  comments_analyze: '#56B4E9',
  jobs: '#000000',
  search: '#F0E442',
};

const WIDTH = 640;
const HEIGHT = 230;
// Room for labels at the narrow screens' font size (22 user units, app.css): four characters of
// axis value on the left, a line of text above the top grid line and below the bars.
const PAD = { left: 64, right: 8, top: 22, bottom: 40 };
/** Days between two day labels: "26 Nov" at the narrow font size is about 70 units, a week 130. */
const LABEL_EVERY = 7;

const compact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });

/** "0", "50", "1.5K", "2M": at most four characters for the axis. */
export function axisValue(value: number): string {
  return compact.format(value);
}

function niceMax(value: number): number {
  // Whole numbers at the three grid lines (0, half, max): counts have no halves.
  if (value <= 4) return 4;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 4, 6, 8, 10]) if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}

export function stackedBarChart(options: {
  id: string;
  title: string;
  days: readonly UsageDay[];
  metric: 'requests' | 'credits';
}): Html {
  const { id, title, days, metric } = options;
  const operations = Object.keys(OPERATION_COLOURS);
  const totals = days.map((d) => d[metric]);
  const max = niceMax(Math.max(0, ...totals));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, days.length);
  const barW = Math.max(2, slot * 0.7);
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const total = totals.reduce((a, b) => a + b, 0);

  const bars = days.map((day, i) => {
    let acc = 0;
    const x = PAD.left + i * slot + (slot - barW) / 2;
    return operations.map((op) => {
      const v = day.operations[op]?.[metric] ?? 0;
      if (v <= 0) return null;
      const top = y(acc + v);
      const h = y(acc) - top;
      acc += v;
      return html`<rect
        x="${x.toFixed(1)}"
        y="${top.toFixed(1)}"
        width="${barW.toFixed(1)}"
        height="${h.toFixed(1)}"
        fill="${OPERATION_COLOURS[op]!}"
        ><title>${day.date} ${op}: ${v}</title></rect
      >`;
    });
  });
  const gridValues = [0, max / 2, max];
  const grid = gridValues.map(
    (v) =>
      html`<line
          x1="${PAD.left}"
          x2="${WIDTH - PAD.right}"
          y1="${y(v).toFixed(1)}"
          y2="${y(v).toFixed(1)}"
          stroke="#8a8a8a"
          stroke-width="0.5"
        /><text x="${PAD.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" font-size="11" fill="#333"
          >${axisValue(v)}</text
        >`,
  );
  const last = days.length - 1;
  const labels = days.map((day, i) =>
    (last - i) % LABEL_EVERY === 0
      ? html`<text
          x="${(i === last ? WIDTH - PAD.right : PAD.left + i * slot + slot / 2).toFixed(1)}"
          y="${HEIGHT - 6}"
          text-anchor="${i === last ? 'end' : 'middle'}"
          font-size="11"
          fill="#333"
          >${dayText(day.date)}</text
        >`
      : null,
  );
  return html`<svg
    class="chart"
    viewBox="0 0 ${WIDTH} ${HEIGHT}"
    role="img"
    aria-labelledby="${id}-title ${id}-desc"
    preserveAspectRatio="xMidYMid meet"
  >
    <title id="${id}-title">${title}</title>
    <desc id="${id}-desc">
      ${plural(total, metric.slice(0, -1))} from ${days[0]?.date ?? ''} to ${days.at(-1)?.date ?? ''}, stacked
      by operation; the table below has every value.
    </desc>
    ${grid}${bars}${labels}
  </svg>`;
}

export function legend(): Html {
  return html`<ul class="legend">
    ${Object.entries(OPERATION_COLOURS).map(
      ([op, colour]) =>
        html`<li>
          <svg width="12" height="12" aria-hidden="true" focusable="false">
            <rect width="12" height="12" fill="${colour}" />
          </svg>
          ${op}
        </li>`,
    )}
  </ul>`;
}
