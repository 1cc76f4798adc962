// The detail panel of one record: where it is, when, key, headers, size, and the value decoded
// as chosen (tombstones marked, Connect's schema shown apart from the payload), with a button
// that copies the value as shown.

import { clear, copyText, fmtBytes, fmtTime, h } from "../dom.js";
import { decode } from "./decode.js";

export function detailPanel(record, mode, close) {
  const value = decode(record, "value", mode, true);
  const key = decode(record, "key", mode === "hex" || mode === "base64" ? mode : "auto", true);
  const copied = h("span", { class: "muted", "aria-live": "polite" });
  const copy = h("button", {
    type: "button",
    disabled: record.tombstone ? true : null,
    onclick: async () => clear(copied, (await copyText(value.text)) ? " Copied." : " The browser refused the clipboard."),
  }, "Copy value");
  const row = (label, content) => [h("dt", {}, label), h("dd", {}, content)];
  return [
    h("div", { class: "toolbar" }, h("h2", { style: "margin:0" }, `Partition ${record.partition} · offset ${record.offset}`),
      h("button", { type: "button", class: "small", style: "margin-left:auto", onclick: close, "aria-label": "Close detail" }, "Close")),
    h(
      "dl",
      {},
      row("Time", [fmtTime(record.timestamp), record.timestamp_type ? h("span", { class: "muted" }, ` (${record.timestamp_type})`) : null]),
      row("Key", record.key === null ? h("span", { class: "muted" }, "null") : h("code", {}, key.text)),
      row("Size", fmtBytes(record.size)),
      row("Headers", record.headers.length ? h("table", { "aria-label": "Headers" }, h("tbody", {}, record.headers.map(([k, v]) => h("tr", {}, h("td", { class: "mono" }, k), h("td", { class: "mono" }, v ?? "null"))))) : h("span", { class: "muted" }, "none")),
    ),
    h("h3", {}, "Value ", record.tombstone ? h("span", { class: "badge tomb" }, "tombstone (null value)") : h("span", { class: "badge schema" }, value.kind), value.note && !record.tombstone ? h("span", { class: "muted" }, ` ${value.note}`) : null),
    record.tombstone
      ? h("p", { class: "hint" }, "A record with a key and no value: on a compacted topic it deletes the key.")
      : h("pre", { class: "value", "aria-label": "Value" }, value.text),
    value.schema ? h("details", {}, h("summary", {}, "Connect schema"), h("pre", {}, JSON.stringify(value.schema, null, 2))) : null,
    h("div", { class: "actions" }, copy, copied),
  ];
}
