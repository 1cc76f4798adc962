// Workers: the hub workers of this group (sluice connect) and the connectors and tasks each
// runs, from GET /workers, each with its state from the status topic (GET /connectors?expand=
// status), so a worker whose tasks fail stands out; a standalone worker (sluice up) lists itself.

import { enc, get } from "../api.js";
import { badge, clear, h, notice } from "../dom.js";
import { dataTable } from "../table.js";

const unitLink = (unit, connectors, states) => {
  const name = connectors.has(unit) ? unit : unit.replace(/-\d+$/, "");
  const state = states[unit];
  return h("span", { class: "unit" }, h("a", { href: `#/connectors/${enc(name)}` }, unit), state ? [" ", badge(state)] : null);
};

/** {unit: state} for every connector ("name") and task ("name-id") the status topic knows. */
function unitStates(expanded) {
  const states = {};
  for (const [name, { status }] of Object.entries(expanded)) {
    if (!status) continue;
    states[name] = status.connector.state;
    for (const task of status.tasks || []) states[`${name}-${task.id}`] = task.state;
  }
  return states;
}

export async function renderWorkers(main) {
  clear(main, h("h1", {}, "Workers"));
  const message = h("div");
  const summary = h("p", { class: "hint" });
  let connectors = new Set();
  let states = {};
  const table = dataTable({
    label: "Workers",
    sort: [0, 1],
    emptyTitle: "No workers",
    emptyHint: "Workers appear once the group has settled its first assignment.",
    rowAttrs: (w) => ({ class: w.units.some((u) => states[u] === "FAILED") ? "warn" : null }),
    columns: [
      {
        label: "Worker",
        value: (w) => w.url,
        render: (w) => [w.url, w.leader ? [" ", badge("LEADER")] : null],
      },
      { label: "Connectors", value: (w) => w.connectors.length, num: true },
      { label: "Tasks", value: (w) => w.tasks.length, num: true },
      { label: "Failed", value: (w) => w.units.filter((u) => states[u] === "FAILED").length, num: true },
      {
        label: "Runs",
        value: (w) => w.units.join(" "),
        text: (w) => w.units.map((u) => `${u} ${states[u] || ""}`).join(" "),
        render: (w) => w.units.flatMap((u, i) => [i ? " " : null, unitLink(u, connectors, states)]),
      },
    ],
  });
  main.append(message, summary, h("div", { class: "card" }, table.element));
  const refresh = async () => {
    try {
      const [view, expanded] = await Promise.all([get("/workers"), get("/connectors?expand=status")]);
      connectors = new Set(Object.keys(expanded));
      states = unitStates(expanded);
      const rows = Object.entries(view.members).map(([url, units]) => ({
        url,
        units,
        leader: url === view.leader_url,
        connectors: units.filter((u) => connectors.has(u)),
        tasks: units.filter((u) => !connectors.has(u)),
      }));
      table.update(rows);
      summary.textContent = view.rebalancing
        ? "The group is rebalancing; this view updates once it settles."
        : `This page is served by ${view.url}.`;
      clear(message);
    } catch (err) {
      if (err.status !== 503 && err.status !== 0) clear(message, notice("error", err.message));
    }
  };
  await refresh();
  const timer = setInterval(refresh, 5000);
  return () => clearInterval(timer);
}
