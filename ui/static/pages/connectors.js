// Connectors list: state, type, tasks and topics of every connector, sortable and filterable.

import { enc, get } from "../api.js";
import { badge, clear, h, notice } from "../dom.js";
import { dataTable } from "../table.js";
import { connectorStates, stateRank } from "./overview.js";

export async function renderConnectors(main) {
  clear(
    main,
    h("h1", {}, "Connectors", h("div", { class: "actions" }, h("a", { href: "#/connectors/new", class: "btn primary" }, "New connector"))),
  );
  const message = h("div");
  const table = dataTable({
    label: "Connectors",
    sort: [0, 1],
    emptyTitle: "No connectors yet",
    emptyHint: "Create one from a plugin's form, or paste a Kafka Connect JSON config.",
    columns: [
      { label: "Name", value: (r) => r.name, render: (r) => h("a", { href: `#/connectors/${enc(r.name)}` }, r.name) },
      { label: "Plugin", value: (r) => r.info?.config?.["connector.class"] || "", cls: "mono" },
      { label: "Type", value: (r) => r.type || "" },
      { label: "State", value: (r) => stateRank(r.state), text: (r) => r.state, render: (r) => badge(r.state) },
      { label: "Tasks", value: (r) => r.tasks.filter((t) => t.state === "RUNNING").length, render: (r) => `${r.tasks.filter((t) => t.state === "RUNNING").length}/${r.tasks.length} running` },
      {
        label: "Topics",
        value: (r) => r.topics.join(", "),
        render: (r) => (r.topics.length ? r.topics.map((t) => [h("a", { href: `#/topics/${enc(t)}` }, t), " "]) : "—"),
      },
    ],
  });
  main.append(message, h("div", { class: "card live" }, table.element));
  const refresh = async () => {
    let rows;
    try {
      rows = await connectorStates();
    } catch (err) {
      if (err.status !== 0) clear(message, notice("error", err.message));
      return;
    }
    clear(message);
    const topics = await Promise.all(
      rows.map((r) => get(`/connectors/${enc(r.name)}/topics`).then((t) => t[r.name]?.topics || []).catch(() => [])),
    );
    rows.forEach((r, i) => { r.topics = topics[i]; });
    table.update(rows);
  };
  await refresh();
  const timer = setInterval(refresh, 4000);
  return () => clearInterval(timer);
}
