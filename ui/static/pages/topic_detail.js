// One topic, in tabs: Messages (the browser), Partitions (offsets, leaders, replicas, ISR; add
// partitions; purge records), Configs, Consumers (groups reading it, with lag) and Produce.
// The tab is part of the URL (#/topics/orders?tab=partitions); Partitions and Consumers
// refresh every five seconds while shown.

import { del, enc, get, patch, post } from "../api.js";
import { confirmAction, confirmByName } from "../dialog.js";
import { badge, clear, fmtBytes, fmtNum, h, notice, section } from "../dom.js";
import { dataTable } from "../table.js";
import { messageBrowser } from "./messages.js";

const TABS = [
  ["messages", "Messages"],
  ["partitions", "Partitions"],
  ["configs", "Configs"],
  ["consumers", "Consumers"],
  ["produce", "Produce"],
];
const REFRESH_MS = 5000;
let flash = null; // a notice to show after a change re-renders the page

function tabFromUrl() {
  const query = new URLSearchParams(location.hash.split("?")[1] || "");
  if (query.has("browse")) return "messages";
  const tab = query.get("tab");
  return TABS.some(([t]) => t === tab) ? tab : "messages";
}

export async function renderTopic(main, name) {
  const topic = await get(`/console/api/topics/${enc(name)}`);
  const message = h("div", { "aria-live": "polite" }, flash);
  flash = null;
  const summary = h("span", { class: "muted" });
  const showSummary = (parts) => clear(summary, `${parts.length} partition${parts.length === 1 ? "" : "s"} · ${fmtNum(parts.reduce((a, p) => a + p.end_offset - p.start_offset, 0))} messages`);
  showSummary(topic.partitions);
  const tablist = h("div", { class: "tabs", role: "tablist", "aria-label": "Topic" });
  const panel = h("div", { role: "tabpanel" });
  let dispose = null;
  const show = (tab) => {
    if (dispose) dispose();
    dispose = null;
    for (const b of tablist.children) b.setAttribute("aria-selected", String(b.dataset.tab === tab));
    const url = `#/topics/${enc(name)}?tab=${tab}`;
    if (location.hash !== url) history.replaceState(null, "", url);
    const made = TAB_RENDER[tab](name, topic, message, showSummary);
    clear(panel, made.element);
    dispose = made.dispose || null;
  };
  for (const [tab, label] of TABS) tablist.append(h("button", { type: "button", role: "tab", "data-tab": tab, onclick: () => show(tab) }, label));
  clear(
    main,
    h("div", { class: "crumbs" }, h("a", { href: "#/topics" }, "Topics"), ` / ${name}`),
    h("h1", {}, name, topic.internal ? h("span", { class: "badge" }, "internal") : null, summary,
      h("div", { class: "actions" }, h("button", {
        type: "button",
        class: "danger",
        onclick: async () => {
          const body = h("p", {}, "The topic and all its messages are deleted on every broker. Consumers of it fail or wait for it to come back.");
          if (!(await confirmByName(`Delete topic ${name}?`, name, body))) return;
          try {
            await del(`/console/api/topics/${enc(name)}`);
            location.hash = "#/topics";
          } catch (err) {
            clear(message, notice("error", `Delete failed: ${err.message}`));
          }
        },
      }, "Delete topic"))),
    message,
    h("div", { class: "card" }, tablist, panel),
  );
  show(tabFromUrl());
  return () => dispose && dispose();
}

const TAB_RENDER = {
  messages: (name, topic) => messageBrowser(name, topic.partitions),
  partitions: partitionsTab,
  configs: (name, topic, message) => ({ element: configsCard(name, topic.configs, message) }),
  consumers: consumersTab,
  produce: (name, topic) => ({ element: produceCard(name, topic.partitions) }),
};

function partitionsTab(name, topic, message, showSummary) {
  const table = dataTable({
    label: "Partitions",
    filter: false,
    sort: [0, 1],
    rowAttrs: (p) => ({ class: p.leader < 0 ? "bad" : p.under_replicated ? "warn" : null }),
    columns: [
      { label: "Partition", value: (p) => p.partition, num: true },
      { label: "Start offset", value: (p) => p.start_offset, render: (p) => fmtNum(p.start_offset), num: true },
      { label: "End offset", value: (p) => p.end_offset, render: (p) => fmtNum(p.end_offset), num: true },
      { label: "Messages", value: (p) => p.end_offset - p.start_offset, render: (p) => fmtNum(p.end_offset - p.start_offset), num: true },
      { label: "Leader", value: (p) => p.leader, render: (p) => (p.leader < 0 ? badge("offline") : p.leader), num: true },
      { label: "Replicas", value: (p) => p.replicas.join(", ") },
      { label: "In sync", value: (p) => p.isr.join(", "), render: (p) => [p.isr.join(", "), p.under_replicated ? [" ", h("span", { class: "badge state-paused" }, "under-replicated")] : null] },
      { label: "Size", value: (p) => p.size_bytes, render: (p) => fmtBytes(p.size_bytes), num: true },
    ],
  });
  table.update(topic.partitions);
  const refresh = async () => {
    try {
      const parts = await get(`/console/api/topics/${enc(name)}/partitions`);
      topic.partitions = parts;
      table.update(parts);
      showSummary(parts);
    } catch {
      /* the connection banner says what is unreachable */
    }
  };
  const timer = setInterval(refresh, REFRESH_MS);
  const element = h("div", {}, h("div", { class: "live-kafka" }, table.element), h("div", { class: "cols" }, addPartitionsForm(name, topic, message), purgeForm(name, topic, message, refresh)));
  return { element, dispose: () => clearInterval(timer) };
}

function addPartitionsForm(name, topic, message) {
  const count = h("input", { id: "add-partitions-count", type: "number", min: topic.partitions.length + 1, value: String(topic.partitions.length + 1) });
  const form = h("form", { "aria-label": "Add partitions" }, h("h3", {}, "Add partitions"),
    h("p", { class: "hint" }, "Kafka never removes partitions; keys map to partitions by hash, so a keyed topic sends some keys to new partitions from now on."),
    h("div", { class: "inline" }, h("div", {}, h("label", { for: "add-partitions-count" }, "New partition count"), count),
      h("div", {}, h("button", { type: "submit" }, "Add partitions"))));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const total = Number(count.value);
    const body = h("p", {}, `${name} grows from ${topic.partitions.length} to ${total} partitions.`);
    if (!(await confirmAction(`Add partitions to ${name}?`, body, "Add partitions"))) return;
    try {
      await post(`/console/api/topics/${enc(name)}/partitions`, { count: total });
      flash = notice("ok", `${name} now has ${total} partitions.`);
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    } catch (err) {
      clear(message, notice("error", err.message));
    }
  });
  return form;
}

function purgeForm(name, topic, message, refresh) {
  const which = h("select", { id: "purge-partition" }, h("option", { value: "" }, "All partitions"), topic.partitions.map((p) => h("option", { value: String(p.partition) }, String(p.partition))));
  const before = h("input", { id: "purge-before", inputmode: "numeric", placeholder: "all records" });
  const form = h("form", { "aria-label": "Purge records" }, h("h3", {}, "Purge records"),
    h("p", { class: "hint" }, "Deletes records below an offset (DeleteRecords): the log start moves up; offsets keep counting. Consumers that had not read them never will."),
    h("div", { class: "inline" }, h("div", {}, h("label", { for: "purge-partition" }, "Partition"), which),
      h("div", {}, h("label", { for: "purge-before" }, "Before offset (empty: everything)"), before),
      h("div", {}, h("button", { type: "submit", class: "danger" }, "Purge records"))));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const raw = before.value.trim();
    if (raw !== "" && !/^\d+$/.test(raw)) return clear(message, notice("error", "Before offset must be a whole number, or empty for everything."));
    const offset = raw === "" ? -1 : Number(raw);
    const ids = which.value === "" ? topic.partitions.map((p) => p.partition) : [Number(which.value)];
    const what = `${raw === "" ? "every record" : `records below offset ${raw}`} of ${which.value === "" ? "every partition" : `partition ${which.value}`}`;
    if (!(await confirmByName(`Purge records of ${name}?`, name, h("p", {}, `This deletes ${what}. It cannot be undone.`), "Purge"))) return;
    try {
      const res = await post(`/console/api/topics/${enc(name)}/delete-records`, { partitions: Object.fromEntries(ids.map((p) => [p, offset])) });
      clear(message, notice("ok", `Purged: log start now ${Object.entries(res.log_start).map(([p, o]) => `${p} → ${o}`).join(", ")}.`));
      await refresh();
    } catch (err) {
      clear(message, notice("error", `Purge failed: ${err.message}`));
    }
  });
  return form;
}

function consumersTab(name) {
  const table = dataTable({
    label: "Consumer groups of this topic",
    sort: [3, -1],
    emptyTitle: "No consumer group reads this topic",
    emptyHint: "Groups appear when a consumer with a group.id commits offsets or is assigned a partition.",
    columns: [
      { label: "Group", value: (g) => g.group_id, render: (g) => h("a", { href: `#/groups/${enc(g.group_id)}` }, g.group_id) },
      { label: "State", value: (g) => g.state, render: (g) => badge(g.state) },
      { label: "Members", value: (g) => g.members, num: true },
      { label: "Lag", value: (g) => g.lag, render: (g) => fmtNum(g.lag), num: true },
      { label: "Partitions without a commit", value: (g) => g.uncommitted_partitions, num: true },
    ],
  });
  const box = h("div", { class: "live-kafka" }, table.element);
  const refresh = () => get(`/console/api/topics/${enc(name)}/consumers`).then(table.update, () => {});
  refresh();
  const timer = setInterval(refresh, REFRESH_MS);
  return { element: box, dispose: () => clearInterval(timer) };
}

function produceCard(name, partitions) {
  const out = h("div", { "aria-live": "polite" });
  const value = h("textarea", { id: "produce-value", name: "value", rows: 6, spellcheck: "false" });
  const tombstone = h("input", { id: "produce-null", name: "null", type: "checkbox" });
  tombstone.addEventListener("change", () => { value.disabled = tombstone.checked; });
  const form = h(
    "form",
    { "aria-label": "Produce a message" },
    h("label", { for: "produce-key" }, "Key (optional)"),
    h("input", { id: "produce-key", name: "key" }),
    h("label", { for: "produce-value" }, "Value"),
    value,
    h("label", { class: "check", for: "produce-null" }, tombstone, "Null value (tombstone: deletes the key on a compacted topic)"),
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
        value: tombstone.checked ? null : value.value,
        headers,
        partition: data.get("partition") === "" ? null : Number(data.get("partition")),
      });
      const what = tombstone.checked ? "Tombstone written" : "Written";
      clear(out, notice("ok", `${what} to partition ${res.partition} at offset ${res.offset}.`));
    } catch (err) {
      clear(out, notice("error", err.message));
    }
  });
  return h("div", { class: "narrow-wide" }, form);
}

function configsCard(name, configs, message) {
  const overrides = Object.entries(configs).filter(([, c]) => !c.is_default);
  const table = dataTable({
    label: "Topic configs",
    sort: [0, 1],
    columns: [
      { label: "Config", value: ([key]) => key, cls: "mono" },
      { label: "Value", value: ([, c]) => (c.sensitive ? "••••" : c.value ?? "—"), cls: "mono" },
      { label: "Source", value: ([, c]) => c.source || (c.is_default ? "default" : "set") },
      {
        label: "",
        sortable: false,
        value: ([, c]) => (c.is_default ? "default" : "set on this topic"),
        render: ([key, c]) => (c.is_default ? h("span", { class: "muted" }, "default") : h("button", { type: "button", class: "small", onclick: () => apply(name, { [key]: null }, message) }, "Reset to default")),
      },
    ],
  });
  table.update(Object.entries(configs));
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
  return h("div", {}, h("h2", {}, `Configs (${overrides.length} set on this topic)`), form, h("div", { style: "margin-top:12px" }, table.element));
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
