// Topics: list with partitions, size, end offsets, retention and rate (sortable, filterable,
// internal topics on request); create a topic.

import { enc, get, post } from "../api.js";
import { clear, fmtBytes, fmtMs, fmtNum, fmtRate, h, notice, section } from "../dom.js";
import { dataTable } from "../table.js";

export async function renderTopics(main) {
  const internal = h("input", { id: "show-internal", type: "checkbox" });
  const table = dataTable({
    label: "Topics",
    sort: [0, 1],
    emptyTitle: "No topics yet",
    emptyHint: "Create one above, or start a source connector.",
    columns: [
      { label: "Name", value: (r) => r.name, render: (r) => [h("a", { href: `#/topics/${enc(r.name)}` }, r.name), r.internal ? h("span", { class: "muted" }, " (internal)") : null] },
      { label: "Partitions", value: (r) => r.partitions, num: true },
      { label: "Messages", value: (r) => r.messages, render: (r) => fmtNum(r.messages), num: true },
      { label: "End offsets", value: (r) => Object.values(r.end_offsets).reduce((a, b) => a + b, 0), render: (r) => fmtNum(Object.values(r.end_offsets).reduce((a, b) => a + b, 0)), num: true },
      { label: "Size", value: (r) => r.size_bytes, render: (r) => fmtBytes(r.size_bytes), num: true },
      {
        label: "Retention",
        value: (r) => Number(r["retention.ms"] ?? 0),
        text: (r) => fmtMs(r["retention.ms"]),
        render: (r) => [fmtMs(r["retention.ms"]), r["retention.bytes"] && r["retention.bytes"] !== "-1" ? ` / ${fmtBytes(Number(r["retention.bytes"]))}` : ""],
      },
      { label: "Cleanup", value: (r) => r["cleanup.policy"] || "" },
      { label: "Msgs/s", value: (r) => r.messages_per_sec, render: (r) => fmtRate(r.messages_per_sec), num: true },
    ],
  });
  const message = h("div");
  clear(
    main,
    h("h1", {}, "Topics"),
    createForm(),
    section(
      "All topics",
      h("label", { class: "check", for: "show-internal" }, internal, "Show internal topics"),
      message,
      h("div", { class: "live-kafka" }, table.element),
    ),
  );
  let rows = [];
  const draw = () => table.update(rows.filter((r) => internal.checked || !r.internal));
  internal.addEventListener("change", draw);
  const refresh = async () => {
    try {
      rows = await get("/console/api/topics");
      clear(message);
      draw();
    } catch (err) {
      if (err.status !== 503 && err.status !== 0) clear(message, notice("error", err.message));
    }
  };
  await refresh();
  const timer = setInterval(refresh, 5000);
  return () => clearInterval(timer);
}

function createForm() {
  const out = h("div", { "aria-live": "polite" });
  const field = (id, label, attrs) => h("div", {}, h("label", { for: id }, label), h("input", { id, name: id, ...attrs }));
  const form = h(
    "form",
    { "aria-label": "Create topic" },
    h(
      "div",
      { class: "inline" },
      field("new-topic-name", "Name", { required: true }),
      field("new-topic-partitions", "Partitions", { type: "number", min: 1, value: "1" }),
      field("new-topic-replication", "Replication factor", { type: "number", min: 1, value: "1" }),
      field("new-topic-retention", "retention.ms (optional)", { placeholder: "cluster default" }),
      h("div", {}, h("button", { type: "submit", class: "primary" }, "Create topic")),
    ),
    out,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const value = (id) => form.querySelector(`#${id}`).value.trim();
    const configs = value("new-topic-retention") ? { "retention.ms": value("new-topic-retention") } : {};
    try {
      const name = value("new-topic-name");
      await post("/console/api/topics", {
        name,
        partitions: Number(value("new-topic-partitions") || 1),
        replication_factor: Number(value("new-topic-replication") || 1),
        configs,
      });
      location.hash = `#/topics/${enc(name)}`;
    } catch (err) {
      clear(out, notice("error", err.message));
    }
  });
  return h("details", { class: "card" }, h("summary", {}, "Create a topic"), form);
}
