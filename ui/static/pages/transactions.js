// Transactions: every transactional id the coordinators know, with producer, state and
// coordinator; one id's state, timeout, start and, per partition, the first offset of the
// open transaction (where read_committed consumers wait). Refreshes every five seconds.

import { enc, get } from "../api.js";
import { badge, clear, fmtMs, fmtNum, fmtTime, h, notice, section, table } from "../dom.js";
import { dataTable } from "../table.js";

const stateClass = (s) => (s === "Ongoing" ? "PAUSED" : s.startsWith("Complete") ? (s === "CompleteCommit" ? "RUNNING" : "STOPPED") : s === "PrepareAbort" || s === "Dead" ? "FAILED" : "UNKNOWN");
const stateBadge = (s) => h("span", { class: `badge state-${stateClass(s).toLowerCase()}` }, s);

export async function renderTransactions(main, id) {
  if (id) return renderTransaction(main, id);
  const message = h("div");
  const list = dataTable({
    label: "Transactions",
    sort: [0, 1],
    emptyTitle: "No transactions",
    emptyHint: "Producers with a transactional.id appear here once they begin a transaction.",
    columns: [
      { label: "Transactional id", value: (t) => t.transactional_id, render: (t) => h("a", { href: `#/transactions/${enc(t.transactional_id)}` }, t.transactional_id) },
      { label: "Producer id", value: (t) => t.producer_id, num: true },
      { label: "State", value: (t) => t.state, render: (t) => stateBadge(t.state) },
      { label: "Coordinator", value: (t) => t.coordinator, num: true },
    ],
  });
  clear(main, h("h1", {}, "Transactions"), message, h("div", { class: "card live-kafka" }, list.element));
  const refresh = async () => {
    try {
      list.update(await get("/console/api/transactions"));
      clear(message);
    } catch (err) {
      if (err.status !== 503 && err.status !== 0) clear(message, notice("error", err.message));
    }
  };
  await refresh();
  const timer = setInterval(refresh, 5000);
  return () => clearInterval(timer);
}

async function renderTransaction(main, id) {
  const body = h("div", { class: "live-kafka" });
  const state = h("span");
  clear(main, h("div", { class: "crumbs" }, h("a", { href: "#/transactions" }, "Transactions"), ` / ${id}`), h("h1", {}, id, state), body);
  const refresh = async () => {
    const t = await get(`/console/api/transactions/${enc(id)}`);
    clear(state, stateBadge(t.state));
    const rows = [["Producer id", t.producer_id], ["Producer epoch", t.producer_epoch], ["Timeout", fmtMs(t.timeout_ms)],
      ["Started", t.started_ms ? fmtTime(t.started_ms) : "—"], ["Coordinator", t.coordinator]];
    clear(
      body,
      h("div", { class: "cols" },
        section("Transaction", table(["", ""], rows.map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, k), h("td", { class: "mono" }, String(v)))))),
        section(
          `Partitions (${t.partitions.length})`,
          t.partitions.length
            ? table(["Topic", ["Partition", "num"], ["First offset in the transaction", "num"]], t.partitions.map((p) =>
                h("tr", {}, h("td", {}, h("a", { href: `#/topics/${enc(p.topic)}` }, p.topic)), h("td", { class: "num" }, p.partition),
                  h("td", { class: "num" }, p.first_offset === null ? "—" : fmtNum(p.first_offset)))), { "aria-label": "Transaction partitions" })
            : h("p", { class: "hint" }, "No partition in the transaction (none open, or it wrote nothing yet)."),
          h("p", { class: "hint" }, "read_committed consumers of a partition wait at the first offset of its open transaction."),
        )),
    );
  };
  await refresh();
  const timer = setInterval(() => refresh().catch(() => {}), 5000);
  return () => clearInterval(timer);
}
