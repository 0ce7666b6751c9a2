// The dashboard page: draws each snapshot the server pushes (server-sent events) with plotly.js, without reloading.
"use strict";

// Okabe–Ito: distinguishable with the common colour-vision deficiencies.
const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442"];
const BAD = "#b3261e", OK = "#1e6b34", SHADE = "rgba(213, 94, 0, 0.13)", CERTIFIED = "#0072B2", CERTIFIED_SHADE = "rgba(0, 114, 178, 0.12)";
const ALERT_MARKERS = [
  ["fairness.violation", "triangle-up", BAD, "violation alert"],
  ["fairness.recovered", "circle", OK, "recovery alert"],
  ["fairness.certified", "diamond", CERTIFIED, "certified"],
  ["fairness.uncertified", "diamond-open", CERTIFIED, "no longer certified"],
  ["fairness.changed", "star", "#7b2d8e", "change point"],
  ["fairness.violated_somewhere", "x", BAD, "violated somewhere (evidence merged over the pairs)"],
];
const groupColors = new Map();
const PLOT_CONFIG = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["lasso2d", "select2d"] };

function colorOf(group) {
  if (!groupColors.has(group)) groupColors.set(group, PALETTE[groupColors.size % PALETTE.length]);
  return groupColors.get(group);
}

function translucent(hex, alpha) {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${n >> 16}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

function text(tag, content, attributes = {}) {
  const node = document.createElement(tag);
  if (content !== undefined && content !== null) node.textContent = content;
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

function number(value, digits = 4) {
  return value === null || value === undefined ? "–" : Number(value).toFixed(digits);
}

function slug(name) {
  return name.replace(/[^A-Za-z0-9_-]/g, "_");
}

function baseLayout(title, yTitle) {
  return {
    title: { text: title, font: { size: 14 }, x: 0, xanchor: "left" },
    margin: { l: 56, r: 16, t: 40, b: 40 },
    height: 330,
    xaxis: { type: "date", automargin: true },
    yaxis: { title: { text: yTitle }, automargin: true, zeroline: false },
    legend: { orientation: "h", y: -0.18 },
    hovermode: "x unified",
    paper_bgcolor: "#fff",
    plot_bgcolor: "#fff",
  };
}

function estimateTraces(part) {
  const traces = [];
  for (const [group, series] of Object.entries(part.groups)) {
    const color = colorOf(group);
    if (series.low.some((v) => v !== null)) {
      traces.push({ x: part.times, y: series.low, mode: "lines", line: { width: 0 }, hoverinfo: "skip", showlegend: false, legendgroup: group, connectgaps: false });
      traces.push({
        x: part.times, y: series.high, mode: "lines", line: { width: 0 }, fill: "tonexty", fillcolor: translucent(color, 0.18),
        hoverinfo: "skip", showlegend: false, legendgroup: group, connectgaps: false,
      });
    }
    const n = part.latest_groups[group];
    traces.push({
      x: part.times, y: series.estimate, customdata: series.trials, mode: "lines", name: `${group} (n=${n === null || n === undefined ? "suppressed" : n})`,
      line: { color, width: 2 }, legendgroup: group, hovertemplate: `${group}: %{y:.4f} (n=%{customdata})<extra></extra>`,
    });
  }
  return traces;
}

function gapTraces(part, alerts) {
  const traces = [];
  if (part.value_low.some((v) => v !== null)) {
    traces.push({ x: part.times, y: part.value_low, mode: "lines", line: { width: 0 }, hoverinfo: "skip", showlegend: false });
    traces.push({ x: part.times, y: part.value_high, mode: "lines", line: { width: 0 }, fill: "tonexty", fillcolor: "rgba(0,0,0,0.12)", name: "interval of the gap", hoverinfo: "skip" });
  }
  traces.push({ x: part.times, y: part.values, mode: "lines", name: part.measure.endsWith("ratio") ? `${part.measure.replace("_", " ")} (min / max)` : `${part.measure.replace("_", " ")} (max − min)`, line: { color: "#1b1b1b", width: 2 } });
  const span = [part.times[0], part.times[part.times.length - 1]];
  if (part.threshold !== null) {
    traces.push({ x: span, y: [part.threshold, part.threshold], mode: "lines", name: "threshold", line: { color: BAD, dash: "dash", width: 2 }, hoverinfo: "skip" });
  }
  if (part.clear_line !== null) {
    traces.push({ x: span, y: [part.clear_line, part.clear_line], mode: "lines", name: "recovery (hysteresis)", line: { color: OK, dash: "dot", width: 1.5 }, hoverinfo: "skip" });
  }
  const mine = alerts.filter((alert) => alert.part === part.name);
  for (const [type, symbol, color, label] of ALERT_MARKERS) {
    const chosen = mine.filter((alert) => alert.type === type);
    if (!chosen.length) continue;
    traces.push({
      x: chosen.map((alert) => alert.event_time), y: chosen.map((alert) => alert[part.measure] ?? part.threshold),
      text: chosen.map((alert) => `${(alert.pair || []).join(" vs ")} · ${alert.alert_id}`), mode: "markers", name: label,
      marker: { symbol, size: 11, color, line: { color: "#fff", width: 1 } }, hovertemplate: "%{text}<extra></extra>",
    });
  }
  return traces;
}

function periodShapes(periods, fillcolor) {
  return periods.map(([start, end]) => ({ type: "rect", xref: "x", yref: "paper", x0: start, x1: end, y0: 0, y1: 1, fillcolor, line: { width: 0 }, layer: "below" }));
}

function ensure(parent, id, make) {
  let node = document.getElementById(id);
  if (!node) {
    node = make();
    node.id = id;
    parent.appendChild(node);
  }
  return node;
}

function drawPart(container, monitor, part) {
  const key = `${slug(monitor.name)}--${slug(part.name)}`;
  const block = ensure(container, `part-${key}`, () => {
    const wrapper = text("div", undefined, { class: "part-block", "data-part": part.name });
    wrapper.appendChild(text("h3", part.name));
    wrapper.appendChild(text("p", undefined, { class: "part-status" }));
    const row = text("div", undefined, { class: "part" });
    row.appendChild(text("div", undefined, { class: "plot", id: `estimates-${key}`, "aria-label": `${part.name}: estimates per group` }));
    row.appendChild(text("div", undefined, { class: "plot", id: `gap-${key}`, "aria-label": `${part.name}: ${part.measure} against the threshold` }));
    wrapper.appendChild(row);
    return wrapper;
  });
  const status = block.querySelector(".part-status");
  status.replaceChildren();
  if (part.status) status.appendChild(text("span", part.status, { class: `status status-${part.status}`, "data-status": part.status }));
  if (part.time_to_verdict) {
    const counts = Object.entries(part.time_to_verdict.trials).map(([group, count], index) => `${count.toLocaleString("en")} ${index ? "of" : "more trials of"} ${group}`);
    status.appendChild(text("span", ` about ${counts.join(" and ")} to be ${part.time_to_verdict.toward}, at today's rates`, { class: "time-to-verdict" }));
  }
  const estimates = block.querySelector(`#estimates-${CSS.escape(key)}`);
  const gap = block.querySelector(`#gap-${CSS.escape(key)}`);
  Plotly.react(estimates, estimateTraces(part), baseLayout(part.point === "rate" ? "raw rate per group" : "estimate per group", part.point === "rate" ? "raw rate" : "estimate"), PLOT_CONFIG);
  const layout = baseLayout(`${part.measure.replace("_", " ")} against its threshold`, part.measure.replace("_", " "));
  layout.yaxis.rangemode = "tozero";
  layout.shapes = [...periodShapes(part.violated_periods, SHADE), ...periodShapes(part.certified_periods || [], CERTIFIED_SHADE)];
  Plotly.react(gap, gapTraces(part, monitor.alerts), layout, PLOT_CONFIG);
}

function alertsTable(monitor) {
  const table = text("table", undefined, { class: "alerts" });
  const head = table.createTHead().insertRow();
  for (const title of ["event time", "alert", "part", "pair", "gap / ratio (raw for tests)", "verdict", "alert id"]) head.appendChild(text("th", title));
  const body = table.createTBody();
  for (const alert of monitor.alerts) {
    const row = body.insertRow();
    row.className = alert.type.replace("fairness.", "");
    row.dataset.alertId = alert.alert_id;
    row.appendChild(text("td", alert.event_time));
    row.appendChild(text("td", alert.type.replace("fairness.", "")));
    row.appendChild(text("td", alert.part));
    row.appendChild(text("td", (alert.pair || []).join(" vs ")));
    row.appendChild(text("td", number(alert.value), { class: "number" }));
    row.appendChild(text("td", alert.verdict));
    const cell = row.insertCell();
    cell.appendChild(text("a", alert.alert_id, { href: `/api/alerts/${encodeURIComponent(alert.alert_id)}`, target: "_blank", rel: "noopener" }));
  }
  return table;
}

function drawShield(container, monitor) {
  const shield = monitor.shield;
  const key = slug(monitor.name);
  const block = ensure(container, `shield-${key}`, () => {
    const wrapper = text("div", undefined, { class: "shield" });
    wrapper.appendChild(text("h3", "shield"));
    wrapper.appendChild(text("div", undefined, { class: "plot", id: `shield-plot-${key}`, "aria-label": "shield: fairness value against its targets" }));
    return wrapper;
  });
  const traces = [
    { x: shield.times, y: shield.fairness, mode: "lines", name: "fairness value (rate gap)", line: { color: "#1b1b1b", width: 2 } },
    { x: shield.flips.times, y: shield.flips.count, yaxis: "y2", mode: "markers", name: "interventions (cumulative)", marker: { color: "#D55E00", size: 6 }, text: shield.flips.ids, hovertemplate: "%{y} · %{text}<extra></extra>" },
  ];
  const layout = baseLayout(`fairness value and interventions (${shield.total_interventions} so far)`, "fairness value");
  layout.yaxis2 = { title: { text: "interventions" }, overlaying: "y", side: "right", rangemode: "tozero", showgrid: false, automargin: true };
  layout.margin.r = 64;
  layout.shapes = [];
  for (const [band, color, label] of [[shield.running, "rgba(0,114,178,0.10)", "running target S"], [shield.limit, "rgba(0,158,115,0.16)", "limit target L"]]) {
    if (!band) continue;
    layout.shapes.push({ type: "rect", xref: "paper", yref: "y", x0: 0, x1: 1, y0: band[0], y1: band[1], fillcolor: color, line: { width: 0 }, layer: "below", name: label });
    traces.push({ x: [null], y: [null], mode: "lines", name: `${label} [${band[0]}, ${band[1]}]`, line: { color: color.replace(/[\d.]+\)$/, "0.8)"), width: 8 } });
  }
  Plotly.react(block.querySelector(".plot"), traces, layout, PLOT_CONFIG);
}

const TRIGGER_SHADES = ["rgba(230,159,0,0.18)", "rgba(86,180,233,0.18)", "rgba(204,121,167,0.18)", "rgba(0,158,115,0.18)"];

function drawWindow(container, monitor, eventWindow) {
  const key = `${slug(monitor.name)}-${slug(eventWindow.name)}`;
  const block = ensure(container, `window-${key}`, () => {
    const wrapper = text("div", undefined, { class: "window", "data-window": eventWindow.name });
    wrapper.appendChild(text("div", undefined, { class: "plot", id: `window-plot-${key}`, "aria-label": `window ${eventWindow.name} over raw events` }));
    return wrapper;
  });
  const traces = Object.entries(eventWindow.groups).map(([group, series]) => ({
    x: series.times, y: series.values, mode: "lines", name: group || eventWindow.name, line: { color: group ? colorOf(group) : "#1b1b1b", width: 2 },
  }));
  const triggers = [...new Set(eventWindow.raised.map(([trigger]) => trigger))];
  const layout = baseLayout(`${eventWindow.name} (window over raw events)`, eventWindow.name);
  layout.shapes = [];
  triggers.forEach((trigger, index) => {
    const shade = TRIGGER_SHADES[index % TRIGGER_SHADES.length];
    layout.shapes.push(...periodShapes(eventWindow.raised.filter(([name]) => name === trigger).map(([, start, end]) => [start, end]), shade));
    traces.push({ x: [null], y: [null], mode: "lines", name: `trigger ${trigger} raised`, line: { color: shade.replace(/[\d.]+\)$/, "0.8)"), width: 8 } });
  });
  Plotly.react(block.querySelector(".plot"), traces, layout, PLOT_CONFIG);
}

function drawMonitor(monitor) {
  const key = slug(monitor.name);
  const section = ensure(document.getElementById("monitors"), `monitor-${key}`, () => {
    const node = text("section", undefined, { "data-monitor": monitor.name, "aria-label": `monitor ${monitor.name}` });
    node.appendChild(text("h2", monitor.name));
    node.appendChild(text("p", undefined, { class: "summary" }));
    node.appendChild(text("div", undefined, { class: "parts" }));
    node.appendChild(text("div", undefined, { class: "shield-slot" }));
    node.appendChild(text("div", undefined, { class: "windows-slot" }));
    node.appendChild(text("h3", "alerts"));
    node.appendChild(text("div", undefined, { class: "alerts-slot" }));
    return node;
  });
  const violated = monitor.parts.filter((part) => part.violated_periods.length && part.violated_periods[part.violated_periods.length - 1][1] === part.times[part.times.length - 1]);
  const summary = section.querySelector(".summary");
  summary.replaceChildren();
  if (monitor.metric) {
    summary.append(`${monitor.metric}, ${monitor.verdict} verdicts · ${monitor.evaluations} evaluations up to ${monitor.event_time} · ${monitor.trials.closed} trials closed, ${monitor.trials.incomplete} incomplete · `);
    summary.appendChild(violated.length ? text("span", `violated now: ${violated.map((p) => p.name).join(", ")}`, { class: "verdict-violated" }) : text("span", "no violation now", { class: "verdict-ok" }));
    const certified = monitor.parts.filter((part) => part.status === "certified");
    const somewhere = monitor.alerts.find((alert) => alert.type === "fairness.violated_somewhere");
    if (somewhere) summary.appendChild(text("span", ` · violated somewhere since ${somewhere.event_time}`, { class: "verdict-violated" }));
    if (certified.length) summary.appendChild(text("span", ` · certified now: ${certified.map((p) => p.name).join(", ")}`, { class: "verdict-certified" }));
  }
  const parts = section.querySelector(".parts");
  for (const part of monitor.parts) drawPart(parts, monitor, part);
  if (monitor.shield) drawShield(section.querySelector(".shield-slot"), monitor);
  for (const eventWindow of monitor.windows) drawWindow(section.querySelector(".windows-slot"), monitor, eventWindow);
  const slot = section.querySelector(".alerts-slot");
  slot.replaceChildren(monitor.alerts.length ? alertsTable(monitor) : text("p", "no alerts", { class: "note" }));
}

function duration(seconds) {
  // a replay of history is years behind the wall clock: say so in days and years, not in a ten-digit count of seconds
  const units = [["years", 365 * 86400], ["days", 86400], ["h", 3600], ["min", 60]];
  for (const [name, size] of units) if (Math.abs(seconds) >= 2 * size) return `${(seconds / size).toFixed(1)} ${name}`;
  return `${seconds.toFixed(1)} s`;
}

function keyValueTable(title, entries, unit = "") {
  const wrapper = text("div", undefined, { "data-table": title });
  wrapper.appendChild(text("h3", title));
  if (!entries.length) {
    wrapper.appendChild(text("p", "none", { class: "note" }));
    return wrapper;
  }
  const table = text("table");
  const body = table.createTBody();
  for (const [name, value] of entries) {
    const row = body.insertRow();
    row.dataset.key = name;
    row.appendChild(text("td", name));
    row.appendChild(text("td", `${value}${unit}`, { class: "number" }));
  }
  wrapper.appendChild(table);
  return wrapper;
}

function drawHealth(snapshot) {
  const body = document.getElementById("health-body");
  const grid = text("div", undefined, { class: "health-grid" });
  const metrics = snapshot.health.metrics;
  if (metrics) {
    grid.appendChild(keyValueTable("input", [["events read", metrics.events_read], ["consumer lag", metrics.consumer_lag]]));
    grid.appendChild(keyValueTable("open trials", Object.entries(metrics.open_trials)));
    grid.appendChild(keyValueTable("watermark behind the wall clock", Object.entries(metrics.watermark_delay_seconds).map(([name, seconds]) => [name, duration(seconds)])));
  }
  grid.appendChild(keyValueTable("dead letters by reason", Object.entries(snapshot.dead_letters)));
  grid.appendChild(keyValueTable("watermark (latest evaluation)", snapshot.monitors.map((m) => [m.name, m.event_time || "–"])));
  const note = snapshot.health.url
    ? snapshot.health.error ? text("p", snapshot.health.error, { class: "note" }) : null
    : text("p", "Events read, open trials and watermark delay: start the job with --metrics-port PORT and the dashboard with --metrics http://HOST:PORT/metrics.", { class: "note" });
  body.replaceChildren(grid, ...(note ? [note] : []));
}

function render(snapshot) {
  const error = document.getElementById("error");
  error.hidden = !snapshot.error;
  error.textContent = snapshot.error || "";
  const records = snapshot.monitors.reduce((sum, m) => sum + m.evaluations, 0);
  const status = document.getElementById("status");
  status.textContent = `${snapshot.monitors.length} monitor(s), ${records} evaluations from ${snapshot.source} · updated ${new Date().toLocaleTimeString()}`;
  status.dataset.version = snapshot.version;
  drawHealth(snapshot);
  for (const monitor of snapshot.monitors) drawMonitor(monitor);
}

function connect() {
  const stream = new EventSource("/api/stream");
  stream.onmessage = (event) => render(JSON.parse(event.data));
  stream.onerror = () => {
    document.getElementById("status").textContent = "connection to the dashboard server lost; retrying…";
  };
}

connect();
