// Overview: cluster size, throughput of the last minutes, connectors with failures first.

import { get } from "../api.js";
import { badge, clear, empty, fmtBytes, fmtNum, fmtRate, h, notice, rateChart, section, table } from "../dom.js";

const STATE_ORDER = ["FAILED", "UNASSIGNED", "RESTARTING", "PAUSED", "STOPPED", "RUNNING"];

function stat(label, value) {
  return h("div", { class: "stat" }, h("div", { class: "label" }, label), h("div", { class: "value" }, value));
}

export async function connectorStates() {
  const expanded = await get("/connectors?expand=status&expand=info");
  return Object.entries(expanded).map(([name, data]) => {
    const status = data.status || {};
    const tasks = status.tasks || [];
    const failedTask = tasks.find((t) => t.state === "FAILED");
    const state = status.connector?.state === "RUNNING" && failedTask ? "FAILED" : status.connector?.state;
    return { name, state: state || "UNASSIGNED", type: status.type || data.info?.type, tasks, info: data.info };
  });
}

export async function renderOverview(main) {
  clear(main, h("h1", {}, "Overview"));
  const body = h("div");
  main.append(body);
  const refresh = async () => {
    const [overview, connectors] = await Promise.all([
      get("/console/api/overview").catch((err) => ({ error: err.message })),
      connectorStates().catch((err) => ({ error: err.message })),
    ]);
    clear(body, draw(overview, connectors));
  };
  await refresh();
  const timer = setInterval(refresh, 5000);
  return () => clearInterval(timer);
}

function draw(overview, connectors) {
  const parts = [];
  if (overview.error) {
    parts.push(notice("error", `Cannot reach the Kafka cluster: ${overview.error}`));
  } else {
    parts.push(
      h(
        "div",
        { class: "grid" },
        stat("Brokers", fmtNum(overview.brokers.length)),
        stat("Topics", fmtNum(overview.topics)),
        stat("Partitions", fmtNum(overview.partitions)),
        stat("Data size", fmtBytes(overview.size_bytes)),
      ),
    );
    const series = overview.rates.series;
    const last = series[series.length - 1];
    parts.push(
      section(
        "Messages per second",
        h(
          "div",
          { class: "legend" },
          h("span", { class: "in" }, `in ${last ? fmtRate(last.in) : "—"}`),
          h("span", { class: "out" }, `out (committed by consumer groups) ${last ? fmtRate(last.out) : "—"}`),
        ),
        rateChart(series),
      ),
    );
  }
  const cols = h("div", { class: "cols" });
  cols.append(connectorsCard(connectors));
  if (!overview.error) {
    cols.append(
      section(
        "Brokers",
        table(
          ["ID", "Address", "Role"],
          overview.brokers.map((b) =>
            h("tr", {}, h("td", {}, b.id), h("td", { class: "mono" }, `${b.host}:${b.port}`),
              h("td", {}, b.id === overview.controller_id ? "controller" : "")),
          ),
        ),
        h("p", { class: "hint" }, `Cluster id ${overview.cluster_id}`),
      ),
    );
  }
  parts.push(cols);
  return parts;
}

function connectorsCard(connectors) {
  if (connectors.error) return section("Connectors", notice("error", connectors.error));
  if (!connectors.length) {
    return section(
      "Connectors",
      empty("No connectors yet", h("a", { href: "#/connectors/new", class: "btn primary" }, "Create a connector")),
    );
  }
  const counts = {};
  for (const c of connectors) counts[c.state] = (counts[c.state] || 0) + 1;
  const rank = (s) => (STATE_ORDER.indexOf(s) + 1 || 99);
  const sorted = [...connectors].sort((a, b) => rank(a.state) - rank(b.state) || a.name.localeCompare(b.name));
  return section(
    "Connectors",
    h("p", {}, Object.entries(counts).sort((a, b) => rank(a[0]) - rank(b[0])).map(([s, n]) => [badge(s), ` ${n}  `])),
    table(
      ["Name", "Type", "State"],
      sorted.map((c) =>
        h("tr", {}, h("td", {}, h("a", { href: `#/connectors/${encodeURIComponent(c.name)}` }, c.name)),
          h("td", {}, c.type || "—"), h("td", {}, badge(c.state))),
      ),
    ),
  );
}
