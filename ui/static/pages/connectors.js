// Connectors list: state, type, tasks and topics of every connector.

import { enc, get } from "../api.js";
import { badge, clear, empty, h, notice, table } from "../dom.js";
import { connectorStates } from "./overview.js";

export async function renderConnectors(main) {
  clear(
    main,
    h("h1", {}, "Connectors", h("div", { class: "actions" }, h("a", { href: "#/connectors/new", class: "btn primary" }, "New connector"))),
  );
  const body = h("div", { class: "card" });
  main.append(body);
  const refresh = async () => {
    let rows;
    try {
      rows = await connectorStates();
    } catch (err) {
      clear(body, notice("error", err.message));
      return;
    }
    if (!rows.length) {
      clear(body, empty("No connectors yet", "Create one from a plugin's form, or paste a Kafka Connect JSON config."));
      return;
    }
    rows.sort((a, b) => a.name.localeCompare(b.name));
    const topics = await Promise.all(
      rows.map((r) => get(`/connectors/${enc(r.name)}/topics`).then((t) => t[r.name]?.topics || []).catch(() => [])),
    );
    clear(
      body,
      table(
        ["Name", "Plugin", "Type", "State", "Tasks", "Topics"],
        rows.map((r, i) => {
          const running = r.tasks.filter((t) => t.state === "RUNNING").length;
          return h(
            "tr",
            {},
            h("td", {}, h("a", { href: `#/connectors/${enc(r.name)}` }, r.name)),
            h("td", { class: "mono" }, r.info?.config?.["connector.class"] || "—"),
            h("td", {}, r.type || "—"),
            h("td", {}, badge(r.state)),
            h("td", {}, `${running}/${r.tasks.length} running`),
            h("td", {}, topics[i].length ? topics[i].map((t) => [h("a", { href: `#/topics/${enc(t)}` }, t), " "]) : "—"),
          );
        }),
        { "aria-label": "Connectors" },
      ),
    );
  };
  await refresh();
  const timer = setInterval(refresh, 4000);
  return () => clearInterval(timer);
}
