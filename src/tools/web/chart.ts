// Line charts drawn on the server as SVG: no chart library, no script, and
// nothing that a Content-Security-Policy without inline styles would block
// (only presentation attributes). Values are numbers; labels go through `html`.
import { html, type Html } from "./html.js";

export interface Series {
  label: string;
  /** A CSS colour, from the fixed palette below. */
  color: string;
  values: number[];
}

export const PALETTE = ["#b1003e", "#2c7fb8", "#41ab5d", "#fe9929", "#6a51a3", "#525252", "#e7298a", "#1b9e77"];

const W = 960;
const H = 260;
const PAD = { left: 64, right: 16, top: 16, bottom: 36 };

/** A "nice" top for the y axis: 1, 2 or 5 times a power of ten above `max`. */
export function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

function fmt(n: number): string {
  return Math.abs(n) >= 1000 ? n.toLocaleString("en-US", { maximumFractionDigits: 0 }) : String(+n.toFixed(2));
}

/** An SVG line chart of `series` over `labels` (x axis, oldest first). */
export function lineChart(opts: { id: string; labels: string[]; series: Series[]; yLabel: string }): Html {
  const { labels, series } = opts;
  const n = Math.max(1, labels.length);
  const top = niceMax(Math.max(0, ...series.flatMap((s) => s.values.filter(Number.isFinite))));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const x = (i: number) => PAD.left + (n === 1 ? plotW / 2 : (i * plotW) / (n - 1));
  const y = (v: number) => PAD.top + plotH - (Math.max(0, v) / top) * plotH;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * top);
  const every = Math.max(1, Math.ceil(n / 8));
  return html`<figure class="chart" id="${opts.id}">
<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${opts.yLabel}" xmlns="http://www.w3.org/2000/svg">
${ticks.map(
  (t) =>
    html`<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(t)}" y2="${y(t)}" stroke="#e5e5e5"/><text x="${PAD.left - 6}" y="${y(t) + 4}" text-anchor="end" font-size="11" fill="#666">${fmt(t)}</text>`,
)}
${labels.map((l, i) =>
  i % every === 0 || i === n - 1
    ? html`<text x="${x(i)}" y="${H - 12}" text-anchor="middle" font-size="11" fill="#666">${l}</text>`
    : "",
)}
<text x="12" y="${PAD.top + plotH / 2}" font-size="11" fill="#666" transform="rotate(-90 12 ${PAD.top + plotH / 2})" text-anchor="middle">${opts.yLabel}</text>
${series.map(
  (s) =>
    html`<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ")}"><title>${s.label}</title></polyline>`,
)}
</svg>
<figcaption>${series.map((s) => html`<span class="swatch"><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="${s.color}"/></svg> ${s.label}</span>`)}</figcaption>
</figure>`;
}

/** An SVG bar chart: one bar per label (a histogram). `total` goes in a data attribute for tests and scripts. */
export function barChart(opts: {
  id: string;
  labels: string[];
  values: number[];
  color: string;
  yLabel: string;
  total: number;
}): Html {
  const n = Math.max(1, opts.labels.length);
  const top = niceMax(Math.max(0, ...opts.values));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / n;
  const y = (v: number) => PAD.top + plotH - (Math.max(0, v) / top) * plotH;
  const ticks = [0, 0.5, 1].map((f) => f * top);
  return html`<figure class="chart" id="${opts.id}" data-total="${opts.total}">
<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${opts.yLabel}" xmlns="http://www.w3.org/2000/svg">
${ticks.map(
  (t) =>
    html`<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(t)}" y2="${y(t)}" stroke="#e5e5e5"/><text x="${PAD.left - 6}" y="${y(t) + 4}" text-anchor="end" font-size="11" fill="#666">${fmt(t)}</text>`,
)}
${opts.values.map(
  (v, i) =>
    html`<rect x="${(PAD.left + i * slot + 2).toFixed(1)}" y="${y(v).toFixed(1)}" width="${Math.max(1, slot - 4).toFixed(1)}" height="${(PAD.top + plotH - y(v)).toFixed(1)}" fill="${opts.color}"><title>${opts.labels[i]}: ${v}</title></rect>`,
)}
${opts.labels.map((l, i) => html`<text x="${(PAD.left + i * slot + slot / 2).toFixed(1)}" y="${H - 12}" text-anchor="middle" font-size="10" fill="#666">${l}</text>`)}
</svg>
</figure>`;
}
