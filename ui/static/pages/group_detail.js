// One consumer group, live (every five seconds): lag per partition, partitions without a
// commit included and marked (their lag is everything they hold); the lag trend the hub has
// sampled; members and assignments; offset reset with a preview of every partition's new
// offset and lag, applied only after confirmation; deleting the group.

import { del, enc, get, post } from "../api.js";
import { confirmAction, confirmByName } from "../dialog.js";
import { badge, clear, fmtNum, h, lineChart, notice, section, table } from "../dom.js";
import { dataTable } from "../table.js";

const REFRESH_MS = 5000;

export async function renderGroup(main, id) {
  const base = `/console/api/groups/${enc(id)}`;
  let group = await get(base);
  const state = h("span", { class: "live-kafka" });
  const message = h("div", { "aria-live": "polite" });
  const totals = h("h2");
  const chart = h("div");
  const membersBox = h("div");
  const offsets = dataTable({
    label: "Committed offsets",
    sort: [0, 1],
    rowAttrs: (o) => ({ class: o.lag_estimated ? "warn" : null }),
    columns: [
      { label: "Topic", value: (o) => o.topic, render: (o) => h("a", { href: `#/topics/${enc(o.topic)}` }, o.topic) },
      { label: "Partition", value: (o) => o.partition, num: true },
      { label: "Committed", value: (o) => o.committed, render: (o) => (o.committed === null ? h("span", { class: "muted" }, "no commit") : fmtNum(o.committed)), num: true },
      { label: "End offset", value: (o) => o.end_offset, render: (o) => fmtNum(o.end_offset), num: true },
      { label: "Lag", value: (o) => o.lag, render: (o) => (o.lag_estimated ? h("span", { title: "no commit: end offset minus start offset" }, `${fmtNum(o.lag)}*`) : fmtNum(o.lag)), num: true },
      { label: "Member", value: (o) => o.member || "", render: (o) => (o.member ? h("span", { class: "mono" }, o.member) : h("span", { class: "muted" }, "unassigned")) },
    ],
  });
  const deleteButton = h("button", { type: "button", class: "danger" }, "Delete group");
  deleteButton.addEventListener("click", async () => {
    const body = h("p", {}, "The group and all its committed offsets are deleted. A consumer that joins it again starts from its auto.offset.reset position.");
    if (!(await confirmByName(`Delete consumer group ${id}?`, id, body))) return;
    try {
      await del(base);
      location.hash = "#/groups";
    } catch (err) {
      clear(message, notice("error", `Delete failed: ${err.message}`));
    }
  });
  const reset = resetCard(id, () => group, message, async () => refresh());
  clear(
    main,
    h("div", { class: "crumbs" }, h("a", { href: "#/groups" }, "Consumer groups"), ` / ${id}`),
    h("h1", {}, id, state, h("div", { class: "actions" }, deleteButton)),
    message,
    h("div", { class: "card live-kafka" }, totals, offsets.element,
      h("p", { class: "hint" }, "* no committed offset: the lag is everything the partition holds (end minus start offset), which the group reads when it gets there.")),
    h("div", { class: "cols" }, h("div", { class: "live-kafka" }, chart), h("div", { class: "live-kafka" }, membersBox)),
    reset.element,
  );

  function draw() {
    const inactive = group.members.length === 0;
    clear(state, badge(group.state));
    const total = group.offsets.reduce((a, o) => a + (o.lag || 0), 0);
    const uncommitted = group.offsets.filter((o) => o.lag_estimated).length;
    clear(totals, `Offsets and lag (total ${fmtNum(total)}${uncommitted ? `, ${uncommitted} partition${uncommitted > 1 ? "s" : ""} without a commit` : ""})`);
    offsets.update(group.offsets);
    const history = group.lag_history || [];
    clear(chart, section("Lag trend", history.length > 1 ? lineChart(history, ["lag"], fmtNum, `Total lag over time, now ${fmtNum(history[history.length - 1].lag)}`) : h("p", { class: "hint" }, "Collecting samples… (the hub samples lag every few seconds while the console is open)")));
    clear(membersBox, section(
      `Members (${group.members.length})`,
      group.members.length
        ? table(["Member", "Client", "Host", "Assigned partitions"], group.members.map((m) =>
            h("tr", {}, h("td", { class: "mono" }, m.member_id), h("td", {}, m.client_id), h("td", {}, m.host),
              h("td", {}, m.assignment.map((a) => `${a.topic}-${a.partition}`).join(", ") || "—"))), { "aria-label": "Members" })
        : h("p", { class: "hint" }, "No active members: the group is inactive, so its offsets can be reset and it can be deleted."),
    ));
    deleteButton.disabled = !inactive;
    deleteButton.title = inactive ? "" : "Stop the group's consumers to delete it";
    reset.sync(inactive);
  }
  async function refresh() {
    try {
      group = await get(base);
      draw();
    } catch {
      /* the connection banner says what is unreachable */
    }
  }
  draw();
  const timer = setInterval(refresh, REFRESH_MS);
  return () => clearInterval(timer);
}

function resetCard(id, current, message, after) {
  const busy = h("div");
  const preview = h("div", { "aria-live": "polite" });
  const topicSelect = h("select", { id: "reset-topic", name: "topic" });
  const submit = h("button", { type: "submit", class: "primary" }, "Preview reset");
  const form = h(
    "form",
    { "aria-label": "Reset offsets" },
    busy,
    h(
      "div",
      { class: "inline" },
      h("div", {}, h("label", { for: "reset-to" }, "Reset to"), h("select", { id: "reset-to", name: "to" },
        [["earliest", "Earliest"], ["latest", "Latest"], ["offset", "Offset"], ["timestamp", "Timestamp"]].map(([v, t]) => h("option", { value: v }, t)))),
      h("div", {}, h("label", { for: "reset-topic" }, "Topic"), topicSelect),
      h("div", {}, h("label", { for: "reset-value" }, "Offset or timestamp (ISO 8601 / epoch ms)"), h("input", { id: "reset-value", name: "value" })),
      h("div", {}, submit),
    ),
    h("p", { class: "hint" }, "Every partition of the chosen topics is reset, those without a commit included. The preview shows each new offset first; nothing changes until you apply it."),
    preview,
  );
  const body = () => {
    const data = new FormData(form);
    const to = data.get("to");
    const raw = String(data.get("value")).trim();
    const out = { to, topic: data.get("topic") || null };
    if (to === "offset") out.offset = Number(raw);
    if (to === "timestamp") out.timestamp = /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
    if ((to === "offset" || to === "timestamp") && (raw === "" || Number.isNaN(out.offset ?? out.timestamp))) {
      throw new Error(`Enter ${to === "offset" ? "an offset" : "a timestamp"} to reset to.`);
    }
    return out;
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    let request;
    let plan;
    try {
      request = body();
      plan = await post(`/console/api/groups/${enc(id)}/reset-offsets`, { ...request, dry_run: true });
    } catch (err) {
      clear(preview, notice("error", err.message));
      return;
    }
    const rows = plan.offsets.map((o) => h("tr", {}, h("td", {}, o.topic), h("td", { class: "num" }, o.partition),
      h("td", { class: "num" }, o.committed === null ? "no commit" : fmtNum(o.committed)), h("td", { class: "num" }, fmtNum(o.offset)), h("td", { class: "num" }, fmtNum(o.lag_after))));
    const apply = h("button", { type: "button", class: "danger" }, `Apply reset to ${plan.offsets.length} partition${plan.offsets.length === 1 ? "" : "s"}`);
    apply.addEventListener("click", async () => {
      const sure = await confirmAction(`Reset offsets of ${id}?`, h("p", {}, `${plan.offsets.length} partition(s) get the offsets in the preview. Consumers of the group continue from there.`), "Reset offsets", true);
      if (!sure) return;
      try {
        const res = await post(`/console/api/groups/${enc(id)}/reset-offsets`, request);
        clear(preview);
        clear(message, notice("ok", `Offsets reset: ${res.offsets.map((o) => `${o.topic}-${o.partition} → ${o.offset}`).join(", ")}.`));
        await after();
      } catch (err) {
        clear(preview, notice("error", err.message));
      }
    });
    clear(preview, h("h3", {}, "Preview (nothing written yet)"),
      table(["Topic", ["Partition", "num"], ["Committed now", "num"], ["New offset", "num"], ["Lag after", "num"]], rows, { "aria-label": "Reset preview" }),
      h("div", { class: "actions" }, apply, h("button", { type: "button", onclick: () => clear(preview) }, "Cancel")));
  });
  return {
    element: section("Reset offsets", form),
    sync(inactive) {
      const topics = [...new Set(current().offsets.map((o) => o.topic))];
      const chosen = topicSelect.value;
      const wanted = ["", ...topics].join("\n");
      if (topicSelect.dataset.options !== wanted) {
        topicSelect.dataset.options = wanted;
        clear(topicSelect, h("option", { value: "" }, "All topics of the group"), topics.map((t) => h("option", { value: t }, t)));
        topicSelect.value = topics.includes(chosen) ? chosen : "";
      }
      submit.disabled = !inactive;
      clear(busy, inactive ? null : notice("info", `The group is ${current().state} with members: stop its consumers to reset offsets.`));
    },
  };
}
