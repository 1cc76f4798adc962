// Overview: cluster size (user topics apart from internal ones), throughput of the last
// minutes, connectors with failures first. Refreshes every five seconds; when a part is
// unreachable the connection banner says which, and the last numbers stay greyed out.

import { enc, get } from "../api.js";
import { badge, clear, fmtBytes, fmtNum, fmtRate, h, notice, rateChart, section } from "../dom.js";
import { dataTable } from "../table.js";

const STATE_ORDER = ["FAILED", "UNASSIGNED", "RESTARTING", "PAUSED", "STOPPED", "RUNNING"];
export const stateRank = (s) => STATE_ORDER.indexOf(s) + 1 || 99;

function stat(label, value, sub, cls) {
  return h("div", { class: `stat ${cls || ""}` }, h("div", { class: "label" }, label), h("div", { class: "value" }, value), sub ? h("div", { class: "sub" }, sub) : null);
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
  const cluster = h("div", { class: "live-kafka live" });
  const connectors = dataTable({
    label: "Connectors",
    columns: [
      { label: "Name", value: (c) => c.name, render: (c) => h("a", { href: `#/connectors/${enc(c.name)}` }, c.name) },
      { label: "Type", value: (c) => c.type || "" },
      { label: "State", value: (c) => stateRank(c.state), text: (c) => c.state, render: (c) => badge(c.state) },
    ],
    sort: [2, 1],
    emptyTitle: "No connectors yet",
    emptyHint: h("a", { href: "#/connectors/new", class: "btn primary" }, "Create a connector"),
  });
  const counts = h("p");
  const connectorsMessage = h("div");
  const brokers = h("div");
  main.append(cluster, h("div", { class: "cols" }, section("Connectors", connectorsMessage, counts, connectors.element), h("div", { class: "live-kafka live" }, brokers)));
  const refresh = async () => {
    const [overview, states] = await Promise.all([
      get("/console/api/overview").catch((err) => ({ error: err })),
      connectorStates().catch((err) => ({ error: err })),
    ]);
    if (!overview.error) {
      clear(cluster, drawCluster(overview));
      clear(brokers, brokersCard(overview));
    } else if (!cluster.childElementCount) {
      clear(cluster, notice("error", overview.error.message));
    }
    if (states.error) {
      if (states.error.status !== 0) clear(connectorsMessage, notice("error", states.error.message));
      return;
    }
    clear(connectorsMessage);
    const tally = {};
    for (const c of states) tally[c.state] = (tally[c.state] || 0) + 1;
    clear(counts, Object.entries(tally).sort((a, b) => stateRank(a[0]) - stateRank(b[0])).map(([s, n]) => [badge(s), ` ${n}  `]));
    connectors.update(states);
  };
  await refresh();
  const timer = setInterval(refresh, 5000);
  return () => clearInterval(timer);
}

function drawCluster(overview) {
  const series = overview.rates.series;
  const last = series[series.length - 1];
  const under = overview.under_replicated || 0;
  return [
    h(
      "div",
      { class: "grid" },
      stat("Brokers", fmtNum(overview.brokers.length)),
      stat("Topics", fmtNum(overview.topics), `+ ${fmtNum(overview.internal_topics)} internal`),
      stat("Partitions", fmtNum(overview.partitions), `+ ${fmtNum(overview.internal_partitions)} internal`),
      stat("Under-replicated", fmtNum(under), h("a", { href: "#/cluster" }, "cluster"), under ? "bad" : ""),
      stat("Data size", fmtBytes(overview.size_bytes), overview.internal_size_bytes === null ? null : `+ ${fmtBytes(overview.internal_size_bytes)} internal`),
    ),
    section(
      "Messages per second",
      h(
        "div",
        { class: "legend" },
        h("span", { class: "in" }, `in ${overview.rates.in_source === "broker-metrics" ? "(broker metrics: MessagesIn) " : ""}${last ? fmtRate(last.in) : "—"}`),
        h("span", { class: "out" }, `out (committed by consumer groups) ${last ? fmtRate(last.out) : "—"}`),
      ),
      rateChart(series),
    ),
  ];
}

function brokersCard(overview) {
  const table = dataTable({
    label: "Brokers",
    filter: false,
    columns: [
      { label: "ID", value: (b) => b.id, num: true },
      { label: "Address", value: (b) => `${b.host}:${b.port}`, cls: "mono" },
      { label: "Role", value: (b) => (b.id === overview.controller_id ? "controller" : "") },
    ],
  });
  table.update(overview.brokers);
  return section("Brokers", table.element, h("p", { class: "hint" }, `Cluster id ${overview.cluster_id}`));
}
