// One connector: status with traces, lifecycle actions, config edit, offsets, topics, DLQ.
// Status refreshes every two seconds so a pause or a failure shows without reloading.

import { ApiError, del, enc, get, post, put } from "../api.js";
import { badge, clear, empty, h, notice, section, table } from "../dom.js";

const DLQ_KEY = "errors.deadletterqueue.topic.name";

export async function renderConnector(main, name) {
  const base = `/connectors/${enc(name)}`;
  const [info, status] = await Promise.all([get(base), get(`${base}/status`)]);
  const title = h("span", {}, name);
  const state = h("span", {}, badge(status.connector.state));
  const message = h("div", { "aria-live": "polite" });
  const statusCard = h("div");
  const offsetsCard = h("div");
  const topicsBox = h("div");
  const act = (label, fn, cls) =>
    h("button", {
      type: "button",
      class: cls,
      onclick: async () => {
        try {
          await fn();
          clear(message, notice("ok", `${label}: done.`));
          await refresh();
        } catch (err) {
          clear(message, notice("error", `${label} failed: ${err.message}`));
        }
      },
    }, label);
  const actions = h(
    "div",
    { class: "actions" },
    act("Pause", () => put(`${base}/pause`)),
    act("Resume", () => put(`${base}/resume`)),
    act("Stop", () => put(`${base}/stop`)),
    act("Restart", () => post(`${base}/restart?includeTasks=true&onlyFailed=false`)),
    h("button", {
      type: "button",
      class: "danger",
      onclick: async () => {
        if (!confirm(`Delete connector ${name}? Its offsets stay in the offsets topic.`)) return;
        try {
          await del(base);
          location.hash = "#/connectors";
        } catch (err) {
          clear(message, notice("error", `Delete failed: ${err.message}`));
        }
      },
    }, "Delete"),
  );
  clear(
    main,
    h("div", { class: "crumbs" }, h("a", { href: "#/connectors" }, "Connectors"), ` / ${name}`),
    h("h1", {}, title, state, h("small", { class: "muted" }, `${info.type} · ${info.config["connector.class"]}`), actions),
    message,
    statusCard,
    h("div", { class: "cols" }, configCard(base, info.config), h("div", {}, offsetsCard, topicsBox)),
  );

  let lastState = null;
  let ticks = 0;
  const reloadOffsets = async () => clear(offsetsCard, await offsetsSection(base, lastState, message, reloadOffsets));
  let lastTopics = null;
  let lastStatus = null;
  async function refresh() {
    const st = await get(`${base}/status`);
    // Re-render only on change: an opened error trace stays open while the page polls.
    const key = JSON.stringify(st);
    if (key !== lastStatus) {
      lastStatus = key;
      const failed = st.tasks.filter((t) => t.state === "FAILED").length;
      clear(state, badge(st.connector.state), failed ? [" ", h("span", { class: "badge state-failed" }, `${failed} task${failed > 1 ? "s" : ""} failed`)] : null);
      clear(statusCard, statusSection(base, st, message));
    }
    const topics = await get(`${base}/topics`).then((t) => t[name]?.topics || []).catch(() => []);
    if (JSON.stringify(topics) !== lastTopics) {
      lastTopics = JSON.stringify(topics);
      clear(topicsBox, topicsCard(topics, info.config));
    }
    ticks += 1;
    if (st.connector.state !== lastState || ticks % 5 === 0) {
      lastState = st.connector.state;
      await reloadOffsets();
    }
  }
  await refresh();
  const timer = setInterval(() => refresh().catch(() => {}), 2000);
  return () => clearInterval(timer);
}

function statusSection(base, st, message) {
  const rows = st.tasks.map((t) =>
    h(
      "tr",
      {},
      h("td", {}, t.id),
      h("td", {}, badge(t.state)),
      h("td", { class: "mono" }, t.worker_id),
      h("td", {}, t.trace ? h("details", {}, h("summary", {}, "Error trace"), h("pre", { class: "trace" }, t.trace)) : "—"),
      h("td", {}, h("button", {
        type: "button",
        onclick: () => post(`${base}/tasks/${t.id}/restart`).then(
          () => clear(message, notice("ok", `Task ${t.id} restarted.`)),
          (err) => clear(message, notice("error", err.message)),
        ),
      }, `Restart task ${t.id}`)),
    ),
  );
  return section(
    "Status",
    h("p", {}, "Connector ", badge(st.connector.state), ` on ${st.connector.worker_id}`),
    st.connector.trace ? h("pre", { class: "trace" }, st.connector.trace) : null,
    rows.length ? table(["Task", "State", "Worker", "Trace", ""], rows, { "aria-label": "Tasks" }) : empty("No tasks", "A stopped connector has no tasks."),
  );
}

function configCard(base, config) {
  const text = h("textarea", { id: "config-json", rows: 16, spellcheck: "false" });
  text.value = JSON.stringify(config, null, 2);
  const out = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { "aria-label": "Connector config" },
    h("label", { for: "config-json" }, "Config (JSON; Apply replaces it)"),
    text,
    out,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Apply config")),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    let cfg;
    try {
      cfg = JSON.parse(text.value);
    } catch (err) {
      clear(out, notice("error", `Not valid JSON: ${err.message}`));
      return;
    }
    try {
      await put(`${base}/config`, cfg);
      clear(out, notice("ok", "Config applied; the connector restarts with it."));
    } catch (err) {
      const reasons = Object.entries((err instanceof ApiError && err.errors) || {}).map(([k, v]) => h("li", {}, `${k}: ${v.join(" ")}`));
      clear(out, notice("error", err.message, reasons.length ? h("ul", {}, reasons) : null));
    }
  });
  return section("Configuration", form);
}

async function offsetsSection(base, state, message, reload) {
  let offsets;
  try {
    offsets = (await get(`${base}/offsets`)).offsets;
  } catch (err) {
    return section("Offsets", notice("error", err.message));
  }
  const stopped = state === "STOPPED";
  return section(
    "Offsets",
    offsets.length
      ? table(["Partition", "Offset"], offsets.map((o) => h("tr", {}, h("td", { class: "mono" }, JSON.stringify(o.partition)), h("td", { class: "mono" }, JSON.stringify(o.offset)))), { "aria-label": "Offsets" })
      : empty("No committed offsets"),
    h(
      "div",
      { class: "actions" },
      h("button", {
        type: "button",
        class: "danger",
        disabled: !stopped,
        onclick: async () => {
          if (!confirm("Reset this connector's offsets? It starts from the beginning when resumed.")) return;
          try {
            const res = await del(`${base}/offsets`);
            clear(message, notice("ok", res.message));
            await reload();
          } catch (err) {
            clear(message, notice("error", err.message));
          }
        },
      }, "Reset offsets"),
      stopped ? null : h("span", { class: "hint" }, "Stop the connector to reset its offsets."),
    ),
  );
}

function topicsCard(topics, config) {
  const dlq = config[DLQ_KEY];
  const link = (t) => h("a", { href: `#/topics/${enc(t)}` }, t);
  return section(
    "Topics",
    topics.length ? h("ul", {}, topics.map((t) => h("li", {}, link(t), " — ", h("a", { href: `#/topics/${enc(t)}?browse=1` }, "browse messages")))) : empty("No topics used yet"),
    h("h3", {}, "Dead-letter topic"),
    dlq ? h("p", {}, link(dlq)) : h("p", { class: "hint" }, `None (set ${DLQ_KEY} with errors.tolerance=all).`),
  );
}
