// Consumer groups: state, members, topics and total lag (partitions without a commit count by
// all they hold, and the list says how many there are), sortable and filterable.

import { enc, get } from "../api.js";
import { badge, clear, fmtNum, h, notice } from "../dom.js";
import { dataTable } from "../table.js";

export async function renderGroups(main) {
  clear(main, h("h1", {}, "Consumer groups"));
  const message = h("div");
  const table = dataTable({
    label: "Consumer groups",
    sort: [0, 1],
    emptyTitle: "No consumer groups",
    emptyHint: "Groups appear when a consumer with a group.id commits or joins (sink connectors use connect-<name>).",
    columns: [
      { label: "Group", value: (g) => g.group_id, render: (g) => h("a", { href: `#/groups/${enc(g.group_id)}` }, g.group_id) },
      { label: "State", value: (g) => g.state, render: (g) => badge(g.state) },
      { label: "Members", value: (g) => g.members, num: true },
      { label: "Topics", value: (g) => g.topics.join(", ") || "—" },
      {
        label: "Total lag",
        value: (g) => g.lag,
        num: true,
        render: (g) => [fmtNum(g.lag), g.uncommitted_partitions ? h("div", { class: "hint" }, `incl. ${g.uncommitted_partitions} partition(s) without a commit`) : null],
      },
    ],
  });
  main.append(message, h("div", { class: "card live-kafka" }, table.element));
  const refresh = async () => {
    try {
      table.update(await get("/console/api/groups"));
      clear(message);
    } catch (err) {
      if (err.status !== 503 && err.status !== 0) clear(message, notice("error", err.message));
    }
  };
  await refresh();
  const timer = setInterval(refresh, 5000);
  return () => clearInterval(timer);
}
