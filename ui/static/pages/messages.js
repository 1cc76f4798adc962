// The message browser of a topic: from earliest, latest, an offset or a timestamp, one
// partition or all, with a text filter, JSON pretty-printed, and a live tail that continues
// from the positions the last answer returned (nothing is committed: no consumer group).

import { enc, get } from "../api.js";
import { clear, empty, fmtTime, h, notice, pretty, section, table } from "../dom.js";

const TAIL_MS = 1500;

function parseTime(text) {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t);
  const ms = Date.parse(t);
  if (Number.isNaN(ms)) throw new Error(`Cannot read "${t}" as a time: use ISO 8601 (2026-11-22T15:04:00Z) or epoch milliseconds`);
  return ms;
}

export function messageBrowser(topic, partitions) {
  const id = (s) => `browse-${s}`;
  const sel = (name, label, options) =>
    h("div", {}, h("label", { for: id(name) }, label), h("select", { id: id(name), name }, options.map(([v, t]) => h("option", { value: v }, t))));
  const input = (name, label, attrs) => h("div", {}, h("label", { for: id(name) }, label), h("input", { id: id(name), name, ...attrs }));
  const out = h("div", { "aria-live": "polite" });
  const tailButton = h("button", { type: "button", "aria-pressed": "false" }, "Live tail");
  const form = h(
    "form",
    { "aria-label": "Browse messages" },
    h(
      "div",
      { class: "inline" },
      sel("start", "From", [["latest", "Latest"], ["earliest", "Earliest"], ["offset", "Offset"], ["timestamp", "Timestamp"]]),
      sel("partition", "Partition", [["", "All"], ...partitions.map((p) => [String(p.partition), String(p.partition)])]),
      input("offset", "Offset", { inputmode: "numeric", placeholder: "0" }),
      input("timestamp", "Timestamp (ISO 8601 or epoch ms)", { placeholder: "2026-11-22T15:00:00Z" }),
      input("limit", "Limit", { type: "number", min: 1, max: 1000, value: "50" }),
      input("q", "Contains text", { type: "search" }),
      h("div", {}, h("button", { type: "submit", class: "primary" }, "Browse"), " ", tailButton),
    ),
    out,
  );
  let rows = [];
  let next = null;
  let timer = null;
  const value = (name) => form.querySelector(`[name="${name}"]`).value.trim();
  const query = (extra) => {
    const params = new URLSearchParams({ limit: value("limit") || "50", ...extra });
    if (value("partition") !== "") params.set("partition", value("partition"));
    if (value("q")) params.set("q", value("q"));
    return `/console/api/topics/${enc(topic)}/messages?${params}`;
  };
  const draw = (status) => {
    if (!rows.length) {
      clear(out, status, empty("No messages", "Nothing matched from this position. Try Earliest, another partition or another filter."));
      return;
    }
    clear(
      out,
      status,
      table(
        [["Partition", "num"], ["Offset", "num"], "Timestamp", "Key", "Value", "Headers"],
        rows.map((r) =>
          h(
            "tr",
            { class: "message" },
            h("td", { class: "num" }, r.partition),
            h("td", { class: "num" }, r.offset),
            h("td", { class: "mono" }, fmtTime(r.timestamp)),
            h("td", { class: "mono" }, r.key === null ? h("span", { class: "muted" }, "null") : r.key),
            h("td", { class: "msg-value" }, h("pre", {}, r.value_encoding === "base64" ? `base64: ${r.value}` : pretty(r.value))),
            h("td", { class: "mono" }, r.headers.length ? r.headers.map(([k, v]) => h("div", {}, `${k}=${v}`)) : "—"),
          ),
        ),
        { "aria-label": "Messages" },
      ),
    );
  };
  const browse = async () => {
    const start = value("start");
    const extra = { start };
    try {
      if (start === "offset") extra.offset = String(Number(value("offset") || 0));
      if (start === "timestamp") extra.timestamp = String(parseTime(value("timestamp")));
      const res = await get(query(extra));
      rows = res.records;
      next = res.next;
      draw(h("p", { class: "hint" }, `${rows.length} message(s) shown; ${res.scanned} read.`));
    } catch (err) {
      rows = [];
      clear(out, notice("error", err.message));
    }
  };
  const tail = async () => {
    if (!next) await browse();
    const positions = Object.entries(next || {}).map(([p, o]) => `${p}:${o}`).join(",");
    try {
      const res = await get(query({ start: "positions", positions }));
      next = res.next;
      if (res.records.length) rows = rows.concat(res.records).slice(-500);
      draw(h("p", { class: "hint" }, `Live: ${rows.length} message(s); new ones appear at the bottom.`));
    } catch (err) {
      clear(out, notice("error", err.message));
    }
  };
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
    browse();
  });
  browse();
  return { element: section("Messages", form), dispose: stopTail };
}
