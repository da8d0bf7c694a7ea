// Dashboard: the realtime chart (filled by the polling script from
// stats.json), the history of processed/failed per day, and Redis facts.
import { lineChart, PALETTE } from "../chart.js";
import { delimited } from "../format.js";
import { html, type Html } from "../html.js";
import { href, type WebRequest } from "../request.js";

const HISTORY_DAYS = [7, 30, 90, 180];

/** The INFO fields Sidekiq's dashboard shows. */
const REDIS_FIELDS: Array<[string, string]> = [
  ["redis_version", "Version"],
  ["uptime_in_days", "Uptime (days)"],
  ["connected_clients", "Connections"],
  ["used_memory_human", "Used Memory"],
  ["used_memory_peak_human", "Peak Used Memory"],
];

export function parseInfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\r\n")) {
    const i = line.indexOf(":");
    if (i > 0 && !line.startsWith("#")) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}

export async function dashboardPage(w: WebRequest): Promise<Html> {
  const days = HISTORY_DAYS.includes(Number(w.query.get("days"))) ? Number(w.query.get("days")) : 30;
  const [history, info] = await Promise.all([
    w.api
      .history(days)
      .days()
      .then((h) => h.reverse()),
    // INFO may be disabled (managed Redis): the panel stays empty.
    w.api.redis.info().then(parseInfo, () => ({}) as Record<string, string>),
  ]);
  return html`<section>
<header class="section-head"><h1>Dashboard</h1>
<span class="poll">Polling every <b>${w.pollSeconds}</b> s · <button type="button" id="poll-toggle" class="btn">Stop polling</button></span></header>
<figure class="chart" id="realtime-chart" data-max-points="60">
<svg viewBox="0 0 960 200" role="img" aria-label="Realtime processed and failed" xmlns="http://www.w3.org/2000/svg">
<line x1="48" x2="944" y1="184" y2="184" stroke="#ccc"/>
<polyline id="rt-processed" fill="none" stroke="${PALETTE[1]}" stroke-width="2" points=""/>
<polyline id="rt-failed" fill="none" stroke="${PALETTE[0]}" stroke-width="2" points=""/>
<text id="rt-max" x="44" y="20" text-anchor="end" font-size="11" fill="#666">0</text>
</svg>
<figcaption>Realtime: <span class="swatch"><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="${PALETTE[1]}"/></svg> Processed</span> <span class="swatch"><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="${PALETTE[0]}"/></svg> Failed</span> per poll</figcaption>
</figure>
<header class="section-head"><h2>History</h2>
<span>${HISTORY_DAYS.map((d) => html` <a class="${d === days ? "btn active" : "btn"}" href="${href(w, "/", { days: d })}">${d} days</a>`)}</span></header>
${lineChart({
  id: "history-chart",
  labels: history.map((d) => d.date.slice(5)),
  series: [
    { label: "Processed", color: PALETTE[1]!, values: history.map((d) => d.processed) },
    { label: "Failed", color: PALETTE[0]!, values: history.map((d) => d.failed) },
  ],
  yLabel: "Jobs per day",
})}
<details><summary>Table</summary><table class="history" id="history"><thead><tr><th>Date</th><th class="num">Processed</th><th class="num">Failed</th></tr></thead>
<tbody>${[...history].reverse().map((d) => html`<tr><td>${d.date}</td><td class="num">${delimited(d.processed)}</td><td class="num">${delimited(d.failed)}</td></tr>`)}</tbody></table></details>
<h2>Redis</h2>
<div class="cards redis">${REDIS_FIELDS.map(([k, label]) => html`<article><span class="count">${info[k] ?? "-"}</span><span class="desc">${label}</span></article>`)}</div>
</section>`;
}
