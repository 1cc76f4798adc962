// Consumer groups: state, members, assignments, committed offsets and lag; reset offsets of a
// group without members (the broker would let a live member overwrite the reset otherwise).

import { enc, get, post } from "../api.js";
import { badge, clear, empty, fmtNum, h, notice, section, table } from "../dom.js";

export async function renderGroups(main) {
  clear(main, h("h1", {}, "Consumer groups"));
  const body = h("div", { class: "card" });
  main.append(body);
  const refresh = async () => {
    try {
      const groups = await get("/console/api/groups");
      if (!groups.length) {
        clear(body, empty("No consumer groups", "Groups appear when a consumer with a group.id commits or joins (sink connectors use connect-<name>)."));
        return;
      }
      clear(
        body,
        table(
          ["Group", "State", ["Members", "num"], "Topics", ["Total lag", "num"]],
          groups.map((g) =>
            h("tr", {}, h("td", {}, h("a", { href: `#/groups/${enc(g.group_id)}` }, g.group_id)), h("td", {}, badge(g.state)),
              h("td", { class: "num" }, g.members), h("td", {}, g.topics.join(", ") || "—"), h("td", { class: "num" }, fmtNum(g.lag))),
          ),
          { "aria-label": "Consumer groups" },
        ),
      );
    } catch (err) {
      clear(body, notice("error", err.message));
    }
  };
  await refresh();
  const timer = setInterval(refresh, 5000);
  return () => clearInterval(timer);
}

export async function renderGroup(main, id, flash) {
  const group = await get(`/console/api/groups/${enc(id)}`);
  const inactive = group.members.length === 0;
  clear(
    main,
    h("div", { class: "crumbs" }, h("a", { href: "#/groups" }, "Consumer groups"), ` / ${id}`),
    h("h1", {}, id, badge(group.state)),
    flash || null,
    section(
      `Offsets and lag (total ${fmtNum(group.offsets.reduce((a, o) => a + (o.lag || 0), 0))})`,
      group.offsets.length
        ? table(
            ["Topic", ["Partition", "num"], ["Committed", "num"], ["End offset", "num"], ["Lag", "num"]],
            group.offsets.map((o) =>
              h("tr", {}, h("td", {}, h("a", { href: `#/topics/${enc(o.topic)}` }, o.topic)), h("td", { class: "num" }, o.partition),
                h("td", { class: "num" }, o.committed === null ? "—" : fmtNum(o.committed)), h("td", { class: "num" }, fmtNum(o.end_offset)),
                h("td", { class: "num" }, o.lag === null ? "—" : fmtNum(o.lag))),
            ),
            { "aria-label": "Committed offsets" },
          )
        : empty("No committed offsets"),
    ),
    section(
      `Members (${group.members.length})`,
      group.members.length
        ? table(
            ["Member", "Client", "Host", "Assigned partitions"],
            group.members.map((m) =>
              h("tr", {}, h("td", { class: "mono" }, m.member_id), h("td", {}, m.client_id), h("td", {}, m.host),
                h("td", {}, m.assignment.map((a) => `${a.topic}-${a.partition}`).join(", ") || "—")),
            ),
            { "aria-label": "Members" },
          )
        : empty("No active members", "The group is inactive: its offsets can be reset."),
    ),
    resetCard(group, inactive),
  );
}

function resetCard(group, inactive) {
  const topics = [...new Set(group.offsets.map((o) => o.topic))];
  const out = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { "aria-label": "Reset offsets" },
    inactive ? null : notice("info", `The group is ${group.state} with members: stop its consumers to reset offsets.`),
    h(
      "div",
      { class: "inline" },
      h("div", {}, h("label", { for: "reset-to" }, "Reset to"), h("select", { id: "reset-to", name: "to" },
        [["earliest", "Earliest"], ["latest", "Latest"], ["offset", "Offset"], ["timestamp", "Timestamp"]].map(([v, t]) => h("option", { value: v }, t)))),
      h("div", {}, h("label", { for: "reset-topic" }, "Topic"), h("select", { id: "reset-topic", name: "topic" },
        h("option", { value: "" }, "All topics of the group"), topics.map((t) => h("option", { value: t }, t)))),
      h("div", {}, h("label", { for: "reset-value" }, "Offset or timestamp (ISO 8601 / epoch ms)"), h("input", { id: "reset-value", name: "value" })),
      h("div", {}, h("button", { type: "submit", class: "primary", disabled: !inactive }, "Reset offsets")),
    ),
    out,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const to = data.get("to");
    const raw = String(data.get("value")).trim();
    const body = { to, topic: data.get("topic") || null };
    if (to === "offset") body.offset = Number(raw);
    if (to === "timestamp") body.timestamp = /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
    if ((to === "offset" || to === "timestamp") && (raw === "" || Number.isNaN(body.offset ?? body.timestamp))) {
      clear(out, notice("error", `Enter ${to === "offset" ? "an offset" : "a timestamp"} to reset to.`));
      return;
    }
    try {
      const res = await post(`/console/api/groups/${enc(group.group_id)}/reset-offsets`, body);
      const done = notice("ok", `Offsets reset: ${res.offsets.map((o) => `${o.topic}-${o.partition} → ${o.offset}`).join(", ")}.`);
      await renderGroup(document.getElementById("main"), group.group_id, done);
    } catch (err) {
      clear(out, notice("error", err.message));
    }
  });
  return section("Reset offsets", form);
}
