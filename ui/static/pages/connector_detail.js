// One connector: status with traces, lifecycle actions, offsets, topics, DLQ, config edit.
// Status refreshes every two seconds so a pause or a failure shows without reloading. Action
// buttons work only in the states they apply to; while the hub does not answer, the state
// shows UNKNOWN with the last state seen and when, and every action is disabled.

import { ApiError, del, enc, get, post, put } from "../api.js";
import { hubDown } from "../connection.js";
import { confirmByName } from "../dialog.js";
import { badge, clear, empty, fmtRate, h, lineChart, notice, section, staleNote, table } from "../dom.js";

const DLQ_KEY = "errors.deadletterqueue.topic.name";
const KEEP_SAMPLES = 90; // three minutes at one sample every two seconds

/** Records per second between consecutive totals of the hub's own metrics (GET /metrics). */
function throughputSection(samples, type) {
  const [a, b] = type === "sink" ? ["read", "sent"] : ["polled", "written"];
  const series = [];
  for (let i = 1; i < samples.length; i += 1) {
    const dt = (samples[i].time - samples[i - 1].time) / 1000;
    if (dt <= 0) continue;
    series.push({
      time: samples[i].time,
      in: Math.max(0, samples[i][a] - samples[i - 1][a]) / dt,
      out: Math.max(0, samples[i][b] - samples[i - 1][b]) / dt,
    });
  }
  const last = series[series.length - 1];
  const label = last ? `Records per second: ${a} ${fmtRate(last.in)}, ${b} ${fmtRate(last.out)}` : "Collecting samples…";
  const totals = samples[samples.length - 1];
  return section(
    "Throughput",
    lineChart(series, ["in", "out"], fmtRate, label),
    h("p", { class: "hint" }, `${label}. Totals on this worker: ${a} ${totals ? totals[a] : 0}, ${b} ${totals ? totals[b] : 0} (the hub's /metrics counters).`),
  );
}

/** Which states each action applies to (Kafka Connect's lifecycle). */
const APPLIES = {
  Pause: ["RUNNING"],
  Resume: ["PAUSED", "STOPPED"],
  Stop: ["RUNNING", "PAUSED", "FAILED", "UNASSIGNED"],
  Restart: ["RUNNING", "FAILED", "UNASSIGNED"],
};

/** The state users care about: RUNNING with a failed task counts as FAILED for actions. */
function effective(st) {
  const failed = st.tasks.some((t) => t.state === "FAILED");
  return st.connector.state === "RUNNING" && failed ? "FAILED" : st.connector.state;
}

export async function renderConnector(main, name) {
  const base = `/connectors/${enc(name)}`;
  const [info, first] = await Promise.all([get(base), get(`${base}/status`)]);
  const state = h("span", { class: "live" });
  const message = h("div", { "aria-live": "polite" });
  const statusCard = h("div", { class: "live" });
  const offsetsCard = h("div", { class: "live" });
  const topicsBox = h("div", { class: "live" });
  const throughputBox = h("div", { class: "live" });
  const samples = [];
  const buttons = {};
  const act = (label, fn) => {
    buttons[label] = h("button", {
      type: "button",
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
    return buttons[label];
  };
  buttons.Delete = h("button", {
    type: "button",
    class: "danger",
    onclick: async () => {
      const body = h("p", {}, "The connector and its tasks stop and its config is removed. Its offsets stay in the offsets topic.");
      if (!(await confirmByName(`Delete connector ${name}?`, name, body))) return;
      try {
        await del(base);
        location.hash = "#/connectors";
      } catch (err) {
        clear(message, notice("error", `Delete failed: ${err.message}`));
      }
    },
  }, "Delete");
  const actions = h(
    "div",
    { class: "actions" },
    act("Pause", () => put(`${base}/pause`)),
    act("Resume", () => put(`${base}/resume`)),
    act("Stop", () => put(`${base}/stop`)),
    act("Restart", () => post(`${base}/restart?includeTasks=true&onlyFailed=false`)),
    buttons.Delete,
  );
  clear(
    main,
    h("div", { class: "crumbs" }, h("a", { href: "#/connectors" }, "Connectors"), ` / ${name}`),
    h("h1", {}, h("span", {}, name), state, h("small", { class: "muted" }, `${info.type} · ${info.config["connector.class"]}`), actions),
    message,
    statusCard,
    throughputBox,
    h("div", { class: "cols" }, offsetsCard, topicsBox),
    h("div", { class: "live" }, configCard(base, info.config)),
  );

  let lastState = null;
  let seen = { state: effective(first), at: Date.now() };
  let ticks = 0;
  const reloadOffsets = async () => clear(offsetsCard, await offsetsSection(base, lastState, message, reloadOffsets));
  let lastTopics = null;
  let lastStatus = null;
  let wasDown = false;

  function enable(current) {
    for (const [label, states] of Object.entries(APPLIES)) {
      const ok = current !== null && states.includes(current);
      buttons[label].disabled = !ok;
      buttons[label].title = ok ? "" : `${label} applies to a connector that is ${states.join(" or ")}`;
    }
    buttons.Delete.disabled = current === null;
  }

  async function refresh() {
    let st;
    try {
      st = await get(`${base}/status`);
    } catch (err) {
      if (!hubDown()) throw err;
      wasDown = true;
      lastStatus = null;
      clear(state, badge("UNKNOWN"), " ", h("span", { class: "stale-note" }, `last seen ${seen.state}`), " ", staleNote(seen.at));
      enable(null);
      return;
    }
    const current = effective(st);
    seen = { state: current, at: Date.now() };
    // Re-render only on change: an opened error trace stays open while the page polls.
    const key = JSON.stringify(st);
    if (key !== lastStatus || wasDown) {
      wasDown = false;
      lastStatus = key;
      const failed = st.tasks.filter((t) => t.state === "FAILED").length;
      clear(state, badge(st.connector.state), failed ? [" ", h("span", { class: "badge state-failed" }, `${failed} task${failed > 1 ? "s" : ""} failed`)] : null);
      clear(statusCard, statusSection(base, st, message));
    }
    enable(current);
    const totals = await get(`/console/api/connectors/${enc(name)}/throughput`).catch(() => null);
    if (totals) {
      samples.push(totals);
      if (samples.length > KEEP_SAMPLES) samples.shift();
      clear(throughputBox, throughputSection(samples, info.type));
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
        class: "small",
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
      const reasons = Object.entries((err instanceof ApiError && err.errors) || {}).flatMap(([k, v]) => [...new Set(v)].map((r) => h("li", {}, `${k}: ${r}`)));
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
  const json = (v) => JSON.stringify(v, null, 1).replace(/\n\s*/g, " ");
  return section(
    `Offsets (${offsets.length})`,
    offsets.length
      ? table(["Partition", "Offset"], offsets.map((o) => h("tr", {}, h("td", { class: "mono" }, json(o.partition)), h("td", { class: "mono" }, json(o.offset)))), { "aria-label": "Offsets" })
      : empty("No committed offsets"),
    h(
      "div",
      { class: "actions" },
      h("button", {
        type: "button",
        class: "danger",
        disabled: !stopped || !offsets.length,
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
    topics.length ? h("ul", {}, topics.map((t) => h("li", {}, link(t), " — ", h("a", { href: `#/topics/${enc(t)}?tab=messages` }, "browse messages")))) : empty("No topics used yet"),
    h("h3", {}, "Dead-letter topic"),
    dlq ? h("p", {}, link(dlq)) : h("p", { class: "hint" }, `None (set ${DLQ_KEY} with errors.tolerance=all).`),
  );
}
