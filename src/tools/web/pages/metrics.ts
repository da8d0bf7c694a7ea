// Metrics: per job class, executions that succeeded and failed and the time
// spent, over a period, as Sidekiq 7/8's Metrics tab (both releases' keys,
// summed for a mixed fleet), with a chart of the top five classes.
import { barChart, lineChart, PALETTE } from "../chart.js";
import { delimited } from "../format.js";
import { html, shown, type Html } from "../html.js";
import { averageSeconds, METRICS_PERIODS, type MetricsResult } from "../../../core/api/metrics-query.js";
import { HISTOGRAM_LABELS } from "../../../core/wire/metrics-keys.js";
import { href, type WebRequest } from "../request.js";

const TABLE_LIMIT = 20;
const CHART_LIMIT = 5;

function bucketLabel(ms: number): string {
  return new Date(ms).toISOString().slice(11, 16);
}

function periodLinks(w: WebRequest, path: string, period: string, maxHours = 72): Html {
  return html`<span class="periods">${Object.keys(METRICS_PERIODS)
    .filter((p) => Number.parseInt(p, 10) <= maxHours)
    .map(
      (p) =>
        html` <a class="${p === period ? "btn active" : "btn"}" href="${href(w, path, { period: p, substr: w.query.get("substr") ?? undefined })}">${p}</a>`,
    )}</span>`;
}

function periodOf(w: WebRequest): string {
  const p = w.query.get("period") ?? "1h";
  return p in METRICS_PERIODS ? p : "1h";
}

function range(r: MetricsResult): Html {
  return html`<p class="note">Data from ${new Date(r.startsAt).toISOString()} to ${new Date(r.endsAt).toISOString()} (${r.granularity === "hourly" ? "ten-minute" : "one-minute"} buckets).</p>`;
}

export async function metricsPage(w: WebRequest): Promise<Html> {
  const period = periodOf(w);
  const substr = w.query.get("substr") ?? "";
  const result = await w.api.metrics().topJobs({ period, classFilter: substr || undefined });
  const rows = [...result.jobs.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, TABLE_LIMIT);
  const charted = rows.slice(0, CHART_LIMIT);
  return html`<section>
<header class="section-head"><h1>Metrics</h1>
<form method="get" action="${href(w, "/metrics")}" class="filter"><input type="hidden" name="period" value="${period}"><input type="search" name="substr" value="${substr}" placeholder="Filter by class" aria-label="Filter by class"><button class="btn">Filter</button></form>
${periodLinks(w, "/metrics", period)}</header>
${
  rows.length > 0
    ? lineChart({
        id: "metrics-chart",
        labels: result.buckets.map(bucketLabel),
        series: charted.map(([kls, j], i) => ({
          label: kls,
          color: PALETTE[i % PALETTE.length]!,
          values: j.series.ms.map((ms) => ms / 1000),
        })),
        yLabel: "Total execution time (seconds)",
      })
    : ""
}
<table class="metrics" id="metrics"><thead><tr><th>Name</th><th class="num">Success</th><th class="num">Failure</th><th class="num">Total Execution Time (Seconds)</th><th class="num">Avg Execution Time (Seconds)</th></tr></thead>
<tbody>
${rows.map(
  ([
    kls,
    j,
  ]) => html`<tr data-class="${kls}"><td><code><a href="${href(w, `/metrics/${encodeURIComponent(kls)}`, { period: Number.parseInt(period, 10) > 8 ? "8h" : period })}">${shown(kls, 200)}</a></code></td>
<td class="num" data-col="success">${delimited(j.p - j.f)}</td><td class="num" data-col="failure">${delimited(j.f)}</td>
<td class="num" data-col="total">${delimited(j.ms / 1000, 2)}</td><td class="num" data-col="avg">${delimited(averageSeconds(j), 2)}</td></tr>`,
)}
${rows.length === 0 ? html`<tr><td colspan="5">No data found</td></tr>` : ""}
</tbody></table>
${rows.length > 0 ? range(result) : ""}
</section>`;
}

export async function metricsForJobPage(w: WebRequest): Promise<Html> {
  const name = w.params[0]!;
  let period = periodOf(w);
  if (Number.parseInt(period, 10) > 8) period = "8h";
  const query = w.api.metrics();
  const [result, histogram] = await Promise.all([
    query.forJob(name, { period }),
    query.histogram(name, METRICS_PERIODS[period]!.minutes ?? 60),
  ]);
  const j = result.jobs.get(name)!;
  const labels = result.buckets.map(bucketLabel);
  return html`<section>
<header class="section-head"><h1><a href="${href(w, "/metrics", { period })}">Metrics</a> / <span class="title">${shown(name, 200)}</span></h1>
${periodLinks(w, `/metrics/${encodeURIComponent(name)}`, period, 8)}</header>
<div class="cards">
<article><span class="count" id="job-success">${delimited(j.p - j.f)}</span><span class="desc">Success</span></article>
<article><span class="count" id="job-failure">${delimited(j.f)}</span><span class="desc">Failure</span></article>
<article><span class="count">${delimited(j.ms / 1000, 2)}</span><span class="desc">Total Execution Time (Seconds)</span></article>
<article><span class="count">${delimited(averageSeconds(j), 2)}</span><span class="desc">Avg Execution Time (Seconds)</span></article>
</div>
${lineChart({
  id: "job-chart",
  labels,
  series: [
    { label: "Success", color: PALETTE[2]!, values: j.series.p.map((p, i) => p - j.series.f[i]!) },
    { label: "Failure", color: PALETTE[0]!, values: j.series.f },
  ],
  yLabel: "Jobs",
})}
${lineChart({
  id: "job-time-chart",
  labels,
  series: [
    {
      label: "Avg execution time (ms)",
      color: PALETTE[1]!,
      values: j.series.ms.map((ms, i) => {
        const done = j.series.p[i]! - j.series.f[i]!;
        return done > 0 ? ms / done : 0;
      }),
    },
  ],
  yLabel: "Milliseconds",
})}
<h2>Execution time <span class="hint">successful jobs per duration bucket, ${delimited(histogram.reduce((a, b) => a + b, 0))} in all</span></h2>
${barChart({ id: "job-histogram", labels: [...HISTOGRAM_LABELS], values: histogram, color: PALETTE[1]!, yLabel: "Jobs", total: histogram.reduce((a, b) => a + b, 0) })}
${range(result)}
</section>`;
}
