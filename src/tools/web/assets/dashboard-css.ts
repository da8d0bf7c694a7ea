// The dashboard's stylesheet, served as /assets/dashboard.css (shipped in the
// package: no CDN, works offline). Colours after Sidekiq's own Web UI.
export const DASHBOARD_CSS = `
:root { --brand: #b1003e; --ink: #222; --muted: #6c757d; --line: #dee2e6; --bg: #f7f7f9; --ok: #41ab5d; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: var(--bg); }
a { color: var(--brand); text-decoration: none; }
a:hover { text-decoration: underline; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
pre { white-space: pre-wrap; word-break: break-all; margin: 0; background: #fff; }
.navbar { display: flex; align-items: center; gap: 16px; background: var(--brand); color: #fff; padding: 0 20px; min-height: 48px; }
.navbar .brand { color: #fff; font-weight: 700; font-size: 18px; letter-spacing: .5px; }
.navbar ul { list-style: none; display: flex; margin: 0; padding: 0; flex-wrap: wrap; }
.navbar li a { display: block; color: #f7d8e3; padding: 14px 12px; }
.navbar li.active a, .navbar li a:hover { color: #fff; background: rgba(0,0,0,.18); text-decoration: none; }
.badge { display: inline-block; padding: 1px 7px; margin: 0 2px; border-radius: 9px; background: #e9ecef; color: #333; font-size: 11px; font-weight: 600; }
.badge.label { background: #dbeafe; }
.badge.quiet { background: #ffe8a1; }
.badge.readonly { background: #fff; color: var(--brand); margin-left: auto; }
main { padding: 16px 20px 40px; max-width: 1400px; margin: 0 auto; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 0 0 16px; }
.cards article { flex: 1 1 120px; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; text-align: center; }
.cards article a { display: block; color: inherit; }
.cards .count { display: block; font-size: 22px; font-weight: 600; color: var(--ink); }
.cards .desc { display: block; font-size: 12px; color: var(--muted); text-transform: uppercase; letter-spacing: .4px; }
#summary .count { color: var(--brand); }
.section-head { display: flex; align-items: center; flex-wrap: wrap; gap: 12px; margin: 18px 0 8px; }
.section-head h1, .section-head h2 { margin: 0; margin-right: auto; font-weight: 500; }
h1 { font-size: 24px; } h2 { font-size: 18px; font-weight: 500; }
.title { color: var(--brand); }
table { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line); margin-bottom: 12px; }
th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { background: #f1f3f5; font-weight: 600; font-size: 13px; }
tbody tr:hover { background: #fdf3f6; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.job-info th, .error-info th { width: 180px; background: #f8f9fa; }
code.args { display: inline-block; max-width: 520px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; vertical-align: bottom; }
.error { color: #8a1538; max-width: 420px; overflow-wrap: anywhere; }
.process-meta { color: var(--muted); font-size: 12px; }
.btn { display: inline-block; font: inherit; font-size: 13px; padding: 4px 10px; margin: 0 2px; border: 1px solid var(--line); border-radius: 4px; background: #fff; color: var(--ink); cursor: pointer; }
.btn:hover { border-color: var(--brand); color: var(--brand); text-decoration: none; }
.btn.active { background: var(--brand); color: #fff; border-color: var(--brand); }
.btn.danger { color: #fff; background: var(--brand); border-color: var(--brand); }
.btn.danger:hover { background: #8a0030; }
form.inline { display: inline; }
.filter { display: flex; gap: 6px; }
.filter input { font: inherit; padding: 4px 8px; border: 1px solid var(--line); border-radius: 4px; }
.bulk { margin: 6px 0; }
.hint, .note { color: var(--muted); font-size: 12px; }
.pagination { list-style: none; display: flex; gap: 4px; padding: 0; }
.pagination a, .pagination span { display: block; padding: 4px 10px; border: 1px solid var(--line); border-radius: 4px; background: #fff; }
.pagination .current span { background: var(--brand); color: #fff; border-color: var(--brand); }
.chart { margin: 0 0 12px; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px; }
.chart > svg { width: 100%; height: auto; display: block; }
details summary { cursor: pointer; color: var(--muted); margin: 4px 0; }
.chart figcaption { font-size: 12px; color: var(--muted); padding: 4px 8px; }
.swatch { margin-right: 12px; white-space: nowrap; }
.swatch svg { vertical-align: -1px; }
.poll { color: var(--muted); font-size: 13px; }
footer { display: flex; gap: 24px; justify-content: center; padding: 12px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--line); }
.error-page { background: #fff; border: 1px solid var(--line); border-left: 4px solid var(--brand); padding: 12px 16px; }
`;
