// The dashboard's only script, served as /assets/dashboard.js (the
// Content-Security-Policy allows no inline script). It polls stats.json to
// keep the summary bar and the realtime chart live, asks before destructive
// buttons, and toggles every checkbox of a table. It never writes HTML: text
// goes through textContent and SVG through setAttribute.
export const DASHBOARD_JS = `"use strict";
(function () {
  var body = document.body;
  var base = body.getAttribute("data-base") || "";
  var pollMs = Math.max(1, Number(body.getAttribute("data-poll")) || 5) * 1000;
  var polling = true;
  var timer = null;
  var last = null;
  var points = { processed: [], failed: [] };

  function fmt(n) { return Number(n).toLocaleString("en-US"); }

  function drawRealtime() {
    var chart = document.getElementById("realtime-chart");
    if (!chart) return;
    var max = Math.max(1, Number(chart.getAttribute("data-max-points")) || 60);
    var top = 1;
    ["processed", "failed"].forEach(function (k) { points[k].forEach(function (v) { if (v > top) top = v; }); });
    ["processed", "failed"].forEach(function (k) {
      var line = document.getElementById("rt-" + k);
      var pts = points[k].map(function (v, i) {
        var x = 48 + (i * 896) / (max - 1);
        var y = 184 - (v / top) * 164;
        return x.toFixed(1) + "," + y.toFixed(1);
      });
      line.setAttribute("points", pts.join(" "));
    });
    document.getElementById("rt-max").textContent = fmt(top);
  }

  function update(stats) {
    var nodes = document.querySelectorAll("[data-stat]");
    for (var i = 0; i < nodes.length; i++) {
      var key = nodes[i].getAttribute("data-stat");
      if (Object.prototype.hasOwnProperty.call(stats, key)) nodes[i].textContent = fmt(stats[key]);
    }
    if (last) {
      var max = 60;
      points.processed.push(Math.max(0, stats.processed - last.processed));
      points.failed.push(Math.max(0, stats.failed - last.failed));
      if (points.processed.length > max) { points.processed.shift(); points.failed.shift(); }
      drawRealtime();
    }
    last = stats;
  }

  function poll() {
    if (!polling) return;
    fetch(base + "/stats.json", { headers: { accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (s) { if (s) update(s); })
      .catch(function () {})
      .then(function () { timer = setTimeout(poll, pollMs); });
  }

  var toggle = document.getElementById("poll-toggle");
  if (toggle) {
    toggle.addEventListener("click", function () {
      polling = !polling;
      toggle.textContent = polling ? "Stop polling" : "Start polling";
      if (polling) poll(); else if (timer) clearTimeout(timer);
    });
  }
  if (document.getElementById("summary")) poll();

  document.addEventListener("click", function (ev) {
    var t = ev.target;
    if (!(t instanceof Element)) return;
    var btn = t.closest("[data-confirm]");
    if (btn && !window.confirm(btn.getAttribute("data-confirm"))) ev.preventDefault();
  });
  document.addEventListener("change", function (ev) {
    var t = ev.target;
    if (!(t instanceof HTMLInputElement) || !t.classList.contains("check-all")) return;
    var table = t.closest("table");
    var boxes = table ? table.querySelectorAll("tbody input[type=checkbox]") : [];
    for (var i = 0; i < boxes.length; i++) boxes[i].checked = t.checked;
  });
})();
`;
