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

const TIME_KEY = "sluice-time";

/** "local" or "utc": how times are shown (the message browser's toggle sets it). */
export function timeZone() {
  try {
    return localStorage.getItem(TIME_KEY) === "utc" ? "utc" : "local";
  } catch {
    return "local";
  }
}

export function setTimeZone(zone) {
  try {
    localStorage.setItem(TIME_KEY, zone);
  } catch {
    /* kept for this page only */
  }
}

const pad = (n, w = 2) => String(n).padStart(w, "0");

/** 2026-11-25 14:03:01.250 UTC, or local time with its offset (+01:00). */
export function fmtTime(ms) {
  if (!ms) return "—";
  const d = new Date(ms);
  if (timeZone() === "utc") return d.toISOString().replace("T", " ").replace("Z", " UTC");
  const off = -d.getTimezoneOffset();
  const zone = `${off >= 0 ? "+" : "-"}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)} ${zone}`;
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
  const last = series[series.length - 1];
  const label = last ? `Messages per second: in ${fmtRate(last.in)}, out ${fmtRate(last.out)}` : "No samples yet";
  return lineChart(series, ["in", "out"], fmtRate, label);
}

/** An inline SVG line chart of [{time, <key>...}] for each of `keys` (class line-<key>). */
export function lineChart(series, keys, fmt, label) {
  const width = 1000;
  const height = 180;
  const pad = 28;
  const max = Math.max(1, ...series.map((s) => Math.max(...keys.map((k) => s[k]))));
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", label);
  const add = (tag, attrs, text) => {
    const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    if (text) el.textContent = text;
    svg.append(el);
  };
  add("line", { x1: pad, y1: height - pad, x2: width - 4, y2: height - pad, class: "axis" });
  add("text", { x: 2, y: 12, class: "tick" }, fmt(max));
  add("text", { x: 2, y: height - pad, class: "tick" }, "0");
  if (series.length > 1) {
    const t0 = series[0].time;
    const span = Math.max(1, series[series.length - 1].time - t0);
    const x = (t) => pad + ((t - t0) / span) * (width - pad - 4);
    const y = (v) => height - pad - (v / max) * (height - pad - 14);
    for (const key of keys) {
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

/** Copies text to the clipboard; resolves false when the browser refuses. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** Offers `text` as a file download named `name`. */
export function download(name, text, type = "application/x-ndjson") {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h("a", { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** A small "as of HH:MM:SS" note for data that could not be refreshed. */
export function staleNote(since) {
  return h("span", { class: "stale-note" }, `not refreshed since ${new Date(since).toLocaleTimeString()}`);
}
