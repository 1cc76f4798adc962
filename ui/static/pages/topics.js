// Topics: list with partitions, size, end offsets, retention and rate; create a topic.

import { enc, get, post } from "../api.js";
import { clear, empty, fmtBytes, fmtMs, fmtNum, fmtRate, h, notice, section, table } from "../dom.js";

export async function renderTopics(main) {
  const filter = h("input", { id: "topic-filter", type: "search", placeholder: "Filter by name", "aria-label": "Filter topics" });
  const internal = h("input", { id: "show-internal", type: "checkbox" });
  const body = h("div");
  clear(
    main,
    h("h1", {}, "Topics"),
    createForm(),
    section(
      "All topics",
      h("div", { class: "inline" }, h("div", {}, filter), h("label", { class: "check", for: "show-internal" }, internal, "Show internal topics")),
      body,
    ),
  );
  let rows = [];
  const draw = () => {
    const needle = filter.value.trim().toLowerCase();
    const shown = rows.filter((r) => (internal.checked || !r.internal) && r.name.toLowerCase().includes(needle));
    if (!shown.length) {
      clear(body, empty(rows.length ? "No topic matches" : "No topics yet", "Create one above, or start a source connector."));
      return;
    }
    clear(
      body,
      table(
        ["Name", ["Partitions", "num"], ["Messages", "num"], ["End offsets", "num"], ["Size", "num"], "Retention", "Cleanup", ["Msgs/s", "num"]],
        shown.map((r) =>
          h(
            "tr",
            {},
            h("td", {}, h("a", { href: `#/topics/${enc(r.name)}` }, r.name), r.internal ? h("span", { class: "muted" }, " (internal)") : null),
            h("td", { class: "num" }, r.partitions),
            h("td", { class: "num" }, fmtNum(r.messages)),
            h("td", { class: "num" }, fmtNum(Object.values(r.end_offsets).reduce((a, b) => a + b, 0))),
            h("td", { class: "num" }, fmtBytes(r.size_bytes)),
            h("td", {}, fmtMs(r["retention.ms"]), r["retention.bytes"] && r["retention.bytes"] !== "-1" ? ` / ${fmtBytes(Number(r["retention.bytes"]))}` : ""),
            h("td", {}, r["cleanup.policy"] || "—"),
            h("td", { class: "num" }, fmtRate(r.messages_per_sec)),
          ),
        ),
        { "aria-label": "Topics" },
      ),
    );
  };
  filter.addEventListener("input", draw);
  internal.addEventListener("change", draw);
  const refresh = async () => {
    try {
      rows = await get("/console/api/topics");
      draw();
    } catch (err) {
      clear(body, notice("error", err.message));
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
