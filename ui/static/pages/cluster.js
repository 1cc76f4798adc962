// The cluster: brokers (id, address, rack, controller, leaders and replicas they hold) and
// every partition's leader, replicas and in-sync replicas, under-replicated and offline ones
// highlighted and countable on their own. Refreshes every five seconds.

import { enc, get } from "../api.js";
import { badge, clear, fmtNum, h, notice, section } from "../dom.js";
import { dataTable } from "../table.js";

const health = (p) => (p.offline ? "offline" : p.under_replicated ? "under-replicated" : "in sync");

export async function renderCluster(main) {
  const message = h("div");
  const summary = h("p");
  const unhealthy = h("input", { id: "only-unhealthy", type: "checkbox" });
  const internal = h("input", { id: "cluster-internal", type: "checkbox" });
  const brokers = dataTable({
    label: "Brokers",
    filter: false,
    sort: [0, 1],
    columns: [
      { label: "ID", value: (b) => b.id, num: true },
      { label: "Address", value: (b) => `${b.host}:${b.port}`, cls: "mono" },
      { label: "Rack", value: (b) => b.rack || "", render: (b) => b.rack || h("span", { class: "muted" }, "none") },
      { label: "Role", value: (b) => (b.controller ? "controller" : ""), render: (b) => (b.controller ? h("span", { class: "badge state-running" }, "controller") : "") },
      { label: "Leader of", value: (b) => b.leaders, num: true },
      { label: "Replicas", value: (b) => b.replicas, num: true },
    ],
  });
  const partitions = dataTable({
    label: "Partitions",
    sort: [5, 1],
    rowAttrs: (p) => ({ class: p.offline ? "bad" : p.under_replicated ? "warn" : null }),
    columns: [
      { label: "Topic", value: (p) => p.topic, render: (p) => h("a", { href: `#/topics/${enc(p.topic)}?tab=partitions` }, p.topic) },
      { label: "Partition", value: (p) => p.partition, num: true },
      { label: "Leader", value: (p) => p.leader, num: true },
      { label: "Replicas", value: (p) => p.replicas.join(", ") },
      { label: "In sync", value: (p) => p.isr.join(", ") },
      {
        label: "Status",
        value: (p) => (p.offline ? 0 : p.under_replicated ? 1 : 2),
        text: health,
        render: (p) => (p.offline ? badge("offline") : p.under_replicated ? h("span", { class: "badge state-paused" }, "under-replicated") : h("span", { class: "badge state-running" }, "in sync")),
      },
    ],
  });
  clear(
    main,
    h("h1", {}, "Cluster"),
    message,
    h("div", { class: "live-kafka" }, section("Brokers", brokers.element, summary),
      section("Partitions",
        h("div", { class: "toolbar" }, h("label", { class: "check", for: "only-unhealthy" }, unhealthy, "Only under-replicated or offline"),
          h("label", { class: "check", for: "cluster-internal" }, internal, "Show internal topics")),
        partitions.element)),
  );
  let rows = [];
  const draw = () => partitions.update(rows.filter((p) => !unhealthy.checked || p.under_replicated || p.offline));
  unhealthy.addEventListener("change", draw);
  internal.addEventListener("change", () => refresh());
  async function refresh() {
    try {
      const [info, parts] = await Promise.all([get("/console/api/cluster"), get(`/console/api/cluster/partitions?internal=${internal.checked}`)]);
      rows = parts;
      brokers.update(info.brokers);
      const under = parts.filter((p) => p.under_replicated).length;
      const offline = parts.filter((p) => p.offline).length;
      clear(summary, `Cluster id ${info.cluster_id} · controller ${info.controller_id ?? "none"} · ${fmtNum(parts.length)} partitions: `,
        h("strong", { class: under ? "stale-note" : null }, `${fmtNum(under)} under-replicated`), ", ", h("strong", { class: offline ? "stale-note" : null }, `${fmtNum(offline)} offline`));
      clear(message);
      draw();
    } catch (err) {
      if (err.status !== 503 && err.status !== 0) clear(message, notice("error", err.message));
    }
  }
  await refresh();
  const timer = setInterval(refresh, 5000);
  return () => clearInterval(timer);
}
