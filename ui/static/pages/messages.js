// The message browser of a topic: one line per record (partition, offset, time, key, value
// preview, size), a detail panel for the selected one; Latest shows the newest first and the
// live tail adds new records at the top, in view. Filters (key, value, header, JSON path) run
// on the hub over pages of the whole range: each answer says how much of the range it has
// searched ("searched N of M") and Continue goes on from exactly there, so a search never
// reports a miss for records it did not read. Nothing is committed (no consumer group).

import { enc, get } from "../api.js";
import { clear, download, empty, fmtBytes, fmtNum, fmtTime, h, notice, setTimeZone, timeZone } from "../dom.js";
import { MODES, decode } from "./decode.js";
import { detailPanel } from "./message_detail.js";

const TAIL_MS = 1500;
const KEEP = 500;

function parseTime(text) {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t);
  const ms = Date.parse(t);
  if (Number.isNaN(ms)) throw new Error(`Cannot read "${t}" as a time: use ISO 8601 (2026-11-22T15:04:00Z) or epoch milliseconds`);
  return ms;
}

const FILTERS = [
  ["key", "Key contains", "cust-0042"],
  ["value", "Value contains", "error"],
  ["header", "Header (name or name=value)", "source=web"],
  ["json_path", "JSON path (JMESPath)", "customer.id == 'cust-0042'"],
];

export function messageBrowser(topic, partitions, initial = {}) {
  const id = (s) => `browse-${s}`;
  const sel = (name, label, options) =>
    h("div", {}, h("label", { for: id(name) }, label), h("select", { id: id(name), name }, options.map(([v, t]) => h("option", { value: v }, t))));
  const input = (name, label, attrs) => h("div", {}, h("label", { for: id(name) }, label), h("input", { id: id(name), name, ...attrs }));
  const progress = h("div", { class: "progress", "aria-live": "polite" });
  const listBox = h("div", { class: "live-kafka" });
  const detailBox = h("aside", { class: "detail card", "aria-label": "Message detail", hidden: true });
  const browser = h("div", { class: "browser" }, listBox, detailBox);
  const tailButton = h("button", { type: "button", "aria-pressed": "false" }, "Live tail");
  const decodeSelect = h("select", { id: id("decode"), name: "decode" }, MODES.map(([v, t]) => h("option", { value: v }, t)));
  const zoneSelect = h("select", { id: id("zone"), name: "zone" }, h("option", { value: "local" }, "Local time"), h("option", { value: "utc" }, "UTC"));
  zoneSelect.value = timeZone();
  const exportButton = h("button", { type: "button" }, "Export page (JSON lines)");
  const form = h(
    "form",
    { "aria-label": "Browse messages" },
    h(
      "div",
      { class: "inline" },
      sel("start", "From", [["latest", "Latest (newest first)"], ["earliest", "Earliest"], ["offset", "Offset"], ["timestamp", "Timestamp"]]),
      sel("partition", "Partition", [["", "All"], ...partitions.map((p) => [String(p.partition), String(p.partition)])]),
      input("offset", "Offset", { inputmode: "numeric", placeholder: "0" }),
      input("timestamp", "Timestamp (ISO 8601 or epoch ms)", { placeholder: "2026-11-22T15:00:00Z" }),
      input("limit", "Limit", { type: "number", min: 1, max: 1000, value: "50" }),
    ),
    h("div", { class: "inline" }, FILTERS.map(([name, label, example]) => input(name, label, { type: "search", placeholder: example })),
      h("div", {}, h("button", { type: "submit", class: "primary" }, "Browse"), " ", tailButton)),
    h("div", { class: "toolbar", style: "margin-top:10px" },
      h("label", { for: id("decode") }, "Decode value as"), decodeSelect,
      h("label", { for: id("zone") }, "Times in"), zoneSelect, exportButton),
  );
  for (const [k, v] of Object.entries(initial)) {
    const el = form.querySelector(`[name="${k}"]`);
    if (el) el.value = v;
  }
  let rows = [];
  let page = null; // the last answer: order, progress, cursor, next
  let selected = null;
  let timer = null;
  let fresh = new Set();
  let generation = 0; // a newer browse makes answers to older requests stale
  const value = (name) => form.querySelector(`[name="${name}"]`).value.trim();
  const keyOf = (r) => `${r.partition}:${r.offset}`;

  const params = (extra) => {
    const p = new URLSearchParams({ limit: value("limit") || "50", ...extra });
    if (value("partition") !== "") p.set("partition", value("partition"));
    for (const [name] of FILTERS) if (value(name)) p.set(name, value(name));
    return `/console/api/topics/${enc(topic)}/messages?${p}`;
  };
  const filtered = () => FILTERS.some(([name]) => value(name));

  function select(record) {
    selected = record ? keyOf(record) : null;
    browser.classList.toggle("open", Boolean(record));
    detailBox.hidden = !record;
    if (record) clear(detailBox, detailPanel(record, decodeSelect.value, () => select(null)));
    for (const tr of listBox.querySelectorAll("tbody tr")) tr.setAttribute("aria-selected", String(tr.dataset.key === selected));
  }

  function drawList() {
    if (!rows.length) {
      const hint = page && !page.progress.done ? "Nothing matched in the part searched so far: continue the search." : "Nothing matched from this position. Try Earliest, another partition or another filter.";
      clear(listBox, empty("No messages", hint));
      return;
    }
    const mode = decodeSelect.value;
    const body = rows.map((r) => {
      const shown = decode(r, "value", mode, false);
      const tr = h(
        "tr",
        { tabindex: "0", "data-key": keyOf(r), "aria-selected": String(keyOf(r) === selected), class: fresh.has(keyOf(r)) ? "fresh" : null },
        h("td", { class: "num" }, r.partition),
        h("td", { class: "num" }, r.offset),
        h("td", { class: "mono", title: fmtTime(r.timestamp) }, fmtTime(r.timestamp)),
        h("td", { class: "mono key", title: r.key ?? "null" }, r.key === null ? h("span", { class: "muted" }, "null") : r.key),
        h("td", { class: "preview", title: shown.text.slice(0, 500) },
          r.tombstone ? h("span", { class: "badge tomb" }, "tombstone") : [shown.kind !== "json" && shown.kind !== "text" ? h("span", { class: "badge schema" }, shown.kind) : null, " ", shown.text.slice(0, 240)]),
        h("td", { class: "num" }, fmtBytes(r.size)),
      );
      tr.addEventListener("click", () => select(r));
      tr.addEventListener("keydown", (event) => { if (event.key === "Enter") select(r); });
      return tr;
    });
    clear(listBox, h("table", { class: "messages", "aria-label": "Messages" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col", class: "num" }, "Partition"), h("th", { scope: "col", class: "num" }, "Offset"),
        h("th", { scope: "col" }, "Time"), h("th", { scope: "col" }, "Key"), h("th", { scope: "col" }, "Value"), h("th", { scope: "col", class: "num" }, "Size"))),
      h("tbody", {}, body)));
  }

  function drawProgress(extra) {
    if (!page) return clear(progress);
    const { searched, total, done } = page.progress;
    const what = filtered() ? `${fmtNum(rows.length)} match${rows.length === 1 ? "" : "es"}` : `${fmtNum(rows.length)} message${rows.length === 1 ? "" : "s"} shown`;
    const order = page.order === "newest_first" ? "newest first" : "oldest first";
    if (!filtered()) {
      const next = page.cursor ? h("button", { type: "button", onclick: () => run(true) }, page.order === "newest_first" ? "Load older" : "Load newer") : null;
      return clear(progress, h("span", {}, `${what}, ${order}; ${fmtNum(searched)} of ${fmtNum(total)} in this range read.`), next, extra);
    }
    const more = page.cursor ? h("button", { type: "button", class: "primary", onclick: () => run(true) }, "Continue searching") : null;
    clear(
      progress,
      h("meter", { min: 0, max: Math.max(total, 1), value: searched, "aria-label": "Searched" }),
      h("span", { class: "searched" }, done ? `Searched all ${fmtNum(total)} messages: ${what}.` : `Searched ${fmtNum(searched)} of ${fmtNum(total)} messages: ${what} so far.`),
      more,
      extra,
    );
  }

  async function run(continuing) {
    const mine = ++generation;
    const extra = {};
    try {
      if (continuing) {
        extra.cursor = page.cursor;
      } else {
        extra.start = value("start");
        if (extra.start === "offset") extra.offset = String(Number(value("offset") || 0));
        if (extra.start === "timestamp") extra.timestamp = String(parseTime(value("timestamp")));
      }
      clear(progress, h("span", { class: "loading" }, continuing ? "Searching further…" : "Reading…"));
      const res = await get(params(extra));
      if (mine !== generation) return;
      fresh = new Set();
      rows = continuing ? rows.concat(res.records) : res.records;
      page = res;
      if (!continuing) select(null);
      drawList();
      drawProgress();
    } catch (err) {
      if (mine === generation) clear(progress, notice("error", err.message));
    }
  }

  async function tail() {
    if (!page) await run(false);
    if (!page) return;
    const mine = generation;
    const positions = Object.entries(page.next || {}).map(([p, o]) => `${p}:${o}`).join(",");
    try {
      const res = await get(params({ start: "positions", positions }));
      if (mine !== generation) return;
      page = { ...page, next: res.next };
      if (res.records.length) {
        fresh = new Set(res.records.map(keyOf));
        rows = page.order === "newest_first" ? [...res.records].reverse().concat(rows).slice(0, KEEP) : rows.concat(res.records).slice(-KEEP);
        drawList();
      }
      const where = page.order === "newest_first" ? "at the top" : "at the bottom";
      drawProgress(h("span", { class: "muted" }, ` Live: new messages appear ${where}.`));
    } catch (err) {
      clear(progress, notice("error", err.message));
    }
  }

  const stopTail = () => {
    if (timer) clearInterval(timer);
    timer = null;
    tailButton.setAttribute("aria-pressed", "false");
    tailButton.textContent = "Live tail";
  };
  tailButton.addEventListener("click", () => {
    if (timer) return stopTail();
    tailButton.setAttribute("aria-pressed", "true");
    tailButton.textContent = "Stop tail";
    tail();
    timer = setInterval(tail, TAIL_MS);
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    stopTail();
    run(false);
  });
  decodeSelect.addEventListener("change", () => {
    drawList();
    const record = rows.find((r) => keyOf(r) === selected);
    if (record) select(record);
  });
  zoneSelect.addEventListener("change", () => {
    setTimeZone(zoneSelect.value);
    drawList();
    const record = rows.find((r) => keyOf(r) === selected);
    if (record) select(record);
  });
  exportButton.addEventListener("click", () => {
    const lines = rows.map((r) => JSON.stringify(r)).join("\n");
    download(`${topic}-messages.jsonl`, lines ? `${lines}\n` : "");
  });
  run(false);
  return { element: h("div", {}, form, progress, browser), dispose: stopTail };
}
