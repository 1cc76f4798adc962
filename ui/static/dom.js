// Small DOM helpers shared by the pages: element builder, formatting, notices, the SVG chart.

/** h("a", {href: "#/x", class: "btn", onclick: fn}, "text", child, [children]) */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (key === "value") el.value = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export function fmtBytes(n) {
  if (n === null || n === undefined) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i += 1;
  }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

export function fmtNum(n) {
  return n === null || n === undefined ? "—" : Number(n).toLocaleString("en-US");
}

export function fmtRate(n) {
  return n === null || n === undefined ? "—" : `${n < 10 ? n.toFixed(1) : Math.round(n)}/s`;
}

export function fmtMs(ms) {
  if (ms === null || ms === undefined || ms === "") return "—";
  const n = Number(ms);
  if (n < 0) return "forever";
  const units = [["d", 86400000], ["h", 3600000], ["min", 60000], ["s", 1000]];
  for (const [unit, size] of units) if (n >= size && n % size === 0) return `${n / size} ${unit}`;
  return `${n} ms`;
}

export function fmtTime(ms) {
  return ms ? new Date(ms).toISOString().replace("T", " ").replace("Z", " UTC") : "—";
}

export function badge(state) {
  const s = String(state || "UNKNOWN").toUpperCase();
  return h("span", { class: `badge state-${s.toLowerCase()}` }, s);
}

/** A message box; kind is "error", "ok" or "info". role=alert makes screen readers read it. */
export function notice(kind, text, extra) {
  return h("div", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, text, extra);
}

export function empty(title, hint) {
  return h("div", { class: "empty" }, h("p", { class: "empty-title" }, title), hint && h("p", {}, hint));
}

/** headers: "Name" or ["Messages", "num"] (a class for right-aligned numbers). */
export function table(headers, rows, attrs) {
  return h(
    "table",
    attrs || {},
    headers.some(Boolean)
      ? h("thead", {}, h("tr", {}, headers.map((x) => (Array.isArray(x) ? h("th", { scope: "col", class: x[1] }, x[0]) : h("th", { scope: "col" }, x)))))
      : null,
    h("tbody", {}, rows),
  );
}

export function section(title, ...children) {
  return h("section", { class: "card" }, h("h2", {}, title), children);
}

/** Pretty-prints JSON text; other text is returned unchanged. */
export function pretty(text) {
  if (text === null || text === undefined) return "null";
  const t = String(text).trim();
  if (!(t.startsWith("{") || t.startsWith("["))) return String(text);
  try {
    return JSON.stringify(JSON.parse(t), null, 2);
  } catch {
    return String(text);
  }
}

/** An inline SVG line chart of messages in/out per second: [{time, in, out}]. */
export function rateChart(series) {
  const width = 1000;
  const height = 180;
  const pad = 28;
  const max = Math.max(1, ...series.map((s) => Math.max(s.in, s.out)));
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img");
  const last = series[series.length - 1];
  svg.setAttribute(
    "aria-label",
    last ? `Messages per second: in ${fmtRate(last.in)}, out ${fmtRate(last.out)}` : "No samples yet",
  );
  const add = (tag, attrs, text) => {
    const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    if (text) el.textContent = text;
    svg.append(el);
  };
  add("line", { x1: pad, y1: height - pad, x2: width - 4, y2: height - pad, class: "axis" });
  add("text", { x: 2, y: 12, class: "tick" }, fmtRate(max));
  add("text", { x: 2, y: height - pad, class: "tick" }, "0");
  if (series.length > 1) {
    const t0 = series[0].time;
    const span = Math.max(1, series[series.length - 1].time - t0);
    const x = (t) => pad + ((t - t0) / span) * (width - pad - 4);
    const y = (v) => height - pad - (v / max) * (height - pad - 14);
    for (const key of ["in", "out"]) {
      const points = series.map((s) => `${x(s.time).toFixed(1)},${y(s[key]).toFixed(1)}`).join(" ");
      add("polyline", { points, class: `line-${key}` });
    }
    add("text", { x: pad, y: height - 8, class: "tick" }, new Date(t0).toLocaleTimeString());
    add("text", { x: width - 74, y: height - 8, class: "tick" }, new Date(t0 + span).toLocaleTimeString());
  } else {
    add("text", { x: width / 2 - 90, y: height / 2, class: "tick" }, "Collecting samples…");
  }
  return svg;
}
