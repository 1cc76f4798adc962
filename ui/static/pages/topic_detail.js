// One topic: partitions (offsets, leader, replicas), messages, produce, configs, delete.

import { del, enc, get, patch, post } from "../api.js";
import { clear, fmtBytes, fmtNum, h, notice, section, table } from "../dom.js";
import { messageBrowser } from "./messages.js";

let flash = null; // a notice to show after a config change re-renders the page

export async function renderTopic(main, name) {
  const topic = await get(`/console/api/topics/${enc(name)}`);
  const message = h("div", { "aria-live": "polite" }, flash);
  flash = null;
  const browser = messageBrowser(name, topic.partitions);
  clear(
    main,
    h("div", { class: "crumbs" }, h("a", { href: "#/topics" }, "Topics"), ` / ${name}`),
    h(
      "h1",
      {},
      name,
      topic.internal ? h("span", { class: "badge" }, "internal") : null,
      h("div", { class: "actions" }, h("button", {
        type: "button",
        class: "danger",
        onclick: async () => {
          if (!confirm(`Delete topic ${name} and all its messages?`)) return;
          try {
            await del(`/console/api/topics/${enc(name)}`);
            location.hash = "#/topics";
          } catch (err) {
            clear(message, notice("error", `Delete failed: ${err.message}`));
          }
        },
      }, "Delete topic")),
    ),
    message,
    partitionsCard(topic),
    browser.element,
    h("div", { class: "cols" }, produceCard(name, topic.partitions), configsCard(name, topic.configs, message)),
  );
  return browser.dispose;
}

function partitionsCard(topic) {
  const total = topic.partitions.reduce((a, p) => a + p.end_offset - p.start_offset, 0);
  return section(
    `Partitions (${topic.partitions.length}; ${fmtNum(total)} messages)`,
    table(
      [["Partition", "num"], ["Start offset", "num"], ["End offset", "num"], ["Messages", "num"], ["Leader", "num"], "Replicas", "In sync", ["Size", "num"]],
      topic.partitions.map((p) =>
        h(
          "tr",
          {},
          h("td", { class: "num" }, p.partition),
          h("td", { class: "num" }, fmtNum(p.start_offset)),
          h("td", { class: "num" }, fmtNum(p.end_offset)),
          h("td", { class: "num" }, fmtNum(p.end_offset - p.start_offset)),
          h("td", { class: "num" }, p.leader),
          h("td", {}, p.replicas.join(", ")),
          h("td", {}, p.isr.join(", ")),
          h("td", { class: "num" }, fmtBytes(p.size_bytes)),
        ),
      ),
      { "aria-label": "Partitions" },
    ),
  );
}

function produceCard(name, partitions) {
  const out = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { "aria-label": "Produce a message" },
    h("label", { for: "produce-key" }, "Key (optional)"),
    h("input", { id: "produce-key", name: "key" }),
    h("label", { for: "produce-value" }, "Value"),
    h("textarea", { id: "produce-value", name: "value", rows: 5, spellcheck: "false" }),
    h("label", { for: "produce-headers" }, "Headers (one name=value per line)"),
    h("textarea", { id: "produce-headers", name: "headers", rows: 2, spellcheck: "false" }),
    h("label", { for: "produce-partition" }, "Partition"),
    h("select", { id: "produce-partition", name: "partition" }, h("option", { value: "" }, "By key (partitioner)"), partitions.map((p) => h("option", { value: p.partition }, p.partition))),
    out,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Produce")),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const headers = {};
    for (const line of String(data.get("headers")).split("\n")) {
      const at = line.indexOf("=");
      if (line.trim() && at > 0) headers[line.slice(0, at).trim()] = line.slice(at + 1).trim();
    }
    try {
      const res = await post(`/console/api/topics/${enc(name)}/messages`, {
        key: data.get("key") || null,
        value: data.get("value"),
        headers,
        partition: data.get("partition") === "" ? null : Number(data.get("partition")),
      });
      clear(out, notice("ok", `Written to partition ${res.partition} at offset ${res.offset}.`));
    } catch (err) {
      clear(out, notice("error", err.message));
    }
  });
  return section("Produce a test message", form);
}

function configsCard(name, configs, message) {
  const overrides = Object.entries(configs).filter(([, c]) => !c.is_default);
  const rows = Object.entries(configs).map(([key, c]) =>
    h(
      "tr",
      {},
      h("td", { class: "mono" }, key),
      h("td", { class: "mono" }, c.sensitive ? "••••" : c.value ?? "—"),
      h("td", {}, c.is_default ? h("span", { class: "muted" }, "default") : h("button", {
        type: "button",
        onclick: () => apply(name, { [key]: null }, message),
      }, "Reset to default")),
    ),
  );
  const form = h(
    "form",
    { "aria-label": "Set a topic config" },
    h(
      "div",
      { class: "inline" },
      h("div", {}, h("label", { for: "config-key" }, "Config"), h("input", { id: "config-key", name: "key", list: "config-keys", placeholder: "retention.ms" })),
      h("div", {}, h("label", { for: "config-value" }, "Value"), h("input", { id: "config-value", name: "value" })),
      h("div", {}, h("button", { type: "submit", class: "primary" }, "Set")),
    ),
    h("datalist", { id: "config-keys" }, Object.keys(configs).map((k) => h("option", { value: k }))),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    apply(name, { [String(data.get("key")).trim()]: String(data.get("value")).trim() }, message);
  });
  return section(
    `Configs (${overrides.length} set on this topic)`,
    form,
    h("details", {}, h("summary", {}, `All ${rows.length} configs`), table(["Config", "Value", ""], rows, { "aria-label": "Topic configs" })),
  );
}

async function apply(name, change, message) {
  try {
    await patch(`/console/api/topics/${enc(name)}/configs`, change);
    const [[key, value]] = Object.entries(change);
    flash = notice("ok", value === null ? `${key} reset to its default.` : `${key} set to ${value}.`);
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  } catch (err) {
    clear(message, notice("error", err.message));
  }
}
