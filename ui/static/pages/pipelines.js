// Pipelines: Spark pipeline templates, defined pipelines with schedules and their runs, last
// progress; create, run now, stop, delete. Served only when the hub has the /pipelines API
// (hub/rest/pipelines.py); otherwise the page says so instead of failing.

import { ApiError, del, enc, get, post } from "../api.js";
import { badge, clear, empty, fmtNum, h, notice, section, table } from "../dom.js";
import { dataTable } from "../table.js";

const secs = (t) => (t ? new Date(t * 1000).toISOString().replace("T", " ").slice(0, 19) + " UTC" : "—");

async function optional(path) {
  try {
    return await get(path);
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 405)) return null;
    throw err;
  }
}

function unavailable(main) {
  main.append(
    h("div", { class: "card" }, empty(
      "Pipelines are not available on this hub",
      h("span", {}, "This hub does not serve the ", h("code", {}, "/pipelines"), " API. Spark pipelines can still run with ", h("code", {}, "sluice pipelines run"), "."),
    )),
  );
}

export async function renderPipelines(main) {
  clear(main, h("h1", {}, "Pipelines"));
  const pipelines = await optional("/pipelines");
  if (pipelines === null) return unavailable(main);
  const templates = (await optional("/pipelines/templates")) || [];
  // Pipelines usually read this cluster: start from its brokers, topics and allowed paths.
  const defaults = await get("/console/api/pipelines/defaults").catch(() => ({ bootstrap_servers: "", topics: [] }));
  const message = h("div", { "aria-live": "polite" });
  const list = Array.isArray(pipelines) ? pipelines : [];
  const listTable = dataTable({
    label: "Pipelines",
    sort: [0, 1],
    emptyTitle: "No pipelines yet",
    emptyHint: "Create one from a template below.",
    columns: [
      { label: "Name", value: (p) => p.name, render: (p) => h("a", { href: `#/pipelines/${enc(p.name)}` }, p.name) },
      { label: "Template", value: (p) => p.template || "" },
      { label: "Schedule", value: (p) => p.schedule || "manual", cls: "mono" },
      { label: "State", value: (p) => p.state, render: (p) => badge(p.state) },
      { label: "Last run", value: (p) => p.last_run?.started || 0, text: (p) => (p.last_run ? p.last_run.state : "never"), render: (p) => (p.last_run ? [badge(p.last_run.state), " ", secs(p.last_run.started)] : "never") },
      { label: "", sortable: false, value: () => "", render: (p) => h("button", { type: "button", class: "small", onclick: () => act(message, `Run ${p.name}`, () => post(`/pipelines/${enc(p.name)}/run`)) }, `Run ${p.name} now`) },
    ],
  });
  listTable.update(list);
  const templateTable = dataTable({
    label: "Templates",
    filter: false,
    columns: [
      { label: "Template", value: (t) => t.name, cls: "mono" },
      { label: "What it does", value: (t) => t.description || "—" },
    ],
  });
  templateTable.update(templates);
  main.append(
    message,
    section("Pipelines", listTable.element),
    templates.length ? createCard(templates, defaults) : null,
    templates.length ? section("Templates", templateTable.element) : null,
  );
}

async function act(message, label, fn) {
  try {
    await fn();
    clear(message, notice("ok", `${label}: done.`));
  } catch (err) {
    clear(message, notice("error", `${label} failed: ${err.message}`));
  }
}

/** A config skeleton from a template's JSON Schema: defaults, nested objects ($ref) expanded,
 * and "" for other required keys, so the user sees every key to fill in. */
function skeleton(schema, defs = schema?.$defs || {}, depth = 0) {
  const out = {};
  const required = new Set(schema?.required || []);
  for (const [key, prop] of Object.entries(schema?.properties || {})) {
    const ref = prop.$ref || prop.allOf?.[0]?.$ref;
    if ("default" in prop) out[key] = prop.default;
    else if (ref && depth < 3) out[key] = skeleton(defs[ref.split("/").pop()], defs, depth + 1);
    else if (required.has(key)) out[key] = prop.type === "array" ? [] : "";
  }
  return out;
}

/** A config of each built-in template that validates as it is, on this cluster's brokers, its
 * first topic and a checkpoint under file.allowed.paths; others start from their schema. */
function starter(template, defaults, name) {
  const safe = (name || "my-pipeline").replace(/[^A-Za-z0-9._-]/g, "-");
  const input = { bootstrap_servers: defaults.bootstrap_servers || "", topics: [defaults.topics?.[0] || "input-topic"], starting_offsets: "earliest" };
  const common = { input, checkpoint_dir: `${defaults.checkpoint_root || "./checkpoints"}/${safe}` };
  const starters = {
    log_aggregation: () => ({ ...common, format: "json", window: "1 minute", watermark: "10 minutes", output_topic: `${safe}-counts` }),
    metrics_rollup: () => ({ ...common, windows: ["1 minute", "1 hour"], watermark: "2 minutes", output_topic: `${safe}-rollups` }),
    cdc_to_table: () => ({ ...common, key: ["id"], columns: { id: "long", name: "string" },
      output_table: { url: `sqlite:///${defaults.file_root || "."}/${safe}.db`, table: safe.replace(/[^A-Za-z0-9_]/g, "_") } }),
    clean_dedupe_enrich: () => ({ ...common, fields: { id: "string", published_at: "string" }, key: ["id"], event_time: "published_at", watermark: "1 hour", output_topic: `${safe}-clean` }),
    sql: () => ({ checkpoint_dir: common.checkpoint_dir, views: { events: { input } }, statement: "SELECT * FROM events", output_topic: `${safe}-out` }),
  };
  if (starters[template.name]) return starters[template.name]();
  const cfg = skeleton(template.config_schema);
  if (cfg.input && typeof cfg.input === "object") Object.assign(cfg.input, input);
  if ("checkpoint_dir" in cfg) cfg.checkpoint_dir = common.checkpoint_dir;
  return cfg;
}

function createCard(templates, defaults) {
  const select = h("select", { id: "pipeline-template", name: "template" }, templates.map((t) => h("option", { value: t.name }, t.name)));
  const config = h("textarea", { id: "pipeline-config", name: "config", rows: 14, spellcheck: "false" });
  const nameInput = h("input", { id: "pipeline-name", name: "name", required: true });
  let filled = "";
  const fill = () => {
    const t = templates.find((x) => x.name === select.value);
    filled = JSON.stringify(starter(t, defaults, nameInput.value.trim()), null, 2);
    config.value = filled;
  };
  select.addEventListener("change", fill);
  nameInput.addEventListener("input", () => { if (config.value === filled) fill(); }); // untouched: follow the name
  fill();
  const out = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { "aria-label": "Create pipeline" },
    h(
      "div",
      { class: "inline" },
      h("div", {}, h("label", { for: "pipeline-name" }, "Name"), nameInput),
      h("div", {}, h("label", { for: "pipeline-template" }, "Template"), select),
      h("div", {}, h("label", { for: "pipeline-schedule" }, "Schedule (cron, UTC; empty = manual)"), h("input", { id: "pipeline-schedule", name: "schedule", placeholder: "*/15 * * * *" })),
    ),
    h("label", { for: "pipeline-config" }, "Template config (JSON)"),
    config,
    h("p", { class: "hint" }, "Pre-filled with a config that works on this cluster: edit topics, outputs and settings as needed. Local paths must lie under file.allowed.paths."),
    out,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Create pipeline")),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    let cfg;
    try {
      cfg = JSON.parse(config.value || "{}");
    } catch (err) {
      clear(out, notice("error", `Config is not valid JSON: ${err.message}`));
      return;
    }
    try {
      const name = String(data.get("name")).trim();
      await post("/pipelines", { name, template: data.get("template"), config: cfg, schedule: String(data.get("schedule")).trim() || null });
      location.hash = `#/pipelines/${enc(name)}`;
    } catch (err) {
      const reasons = Object.entries(err.errors || {}).flatMap(([k, v]) => [...new Set([].concat(v))].map((r) => h("li", {}, h("code", {}, k || "config"), `: ${r}`)));
      clear(out, notice("error", err.message, reasons.length ? h("ul", { "aria-label": "Config errors" }, reasons) : null));
    }
  });
  return section("Create a pipeline", form);
}

export async function renderPipeline(main, name) {
  const base = `/pipelines/${enc(name)}`;
  const first = await optional(base);
  if (first === null) {
    clear(main, h("h1", {}, name));
    return unavailable(main);
  }
  const state = h("span");
  const message = h("div", { "aria-live": "polite" });
  const body = h("div");
  const button = (label, fn, cls) => h("button", { type: "button", class: cls, onclick: () => act(message, label, fn).then(refresh) }, label);
  clear(
    main,
    h("div", { class: "crumbs" }, h("a", { href: "#/pipelines" }, "Pipelines"), ` / ${name}`),
    h("h1", {}, name, state, h("div", { class: "actions" },
      button("Run now", () => post(`${base}/run`)),
      button("Stop", () => post(`${base}/stop`)),
      h("button", { type: "button", class: "danger", onclick: async () => {
        if (!confirm(`Delete pipeline ${name}?`)) return;
        await act(message, "Delete", () => del(base));
        location.hash = "#/pipelines";
      } }, "Delete"))),
    message,
    body,
  );
  async function refresh() {
    const p = await get(base);
    clear(state, badge(p.state));
    const runs = [...(p.runs || [])].reverse();
    clear(
      body,
      h(
        "div",
        { class: "cols" },
        section(
          "Definition",
          table(["", ""], [
            ["Template", p.template], ["Schedule", p.schedule || "manual"], ["Next run", p.next_run || "—"],
            ["Mode", p.once ? "batch (process what is there, then stop)" : "streaming"], ["Spark master", p.master],
          ].map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, k), h("td", { class: "mono" }, v ?? "—")))),
          h("h3", {}, "Config"),
          h("pre", {}, JSON.stringify(p.config || {}, null, 2)),
        ),
        section("Last progress", p.last_progress ? progress(p.last_progress) : empty("No progress reported yet")),
      ),
      section(
        `Recent runs (${runs.length})`,
        runs.length
          ? table(["Run", "Trigger", "Started", "Finished", "Exit code", "State", ""], runs.map((r) =>
              h("tr", {}, h("td", { class: "mono" }, r.id), h("td", {}, r.trigger || "—"), h("td", {}, secs(r.started)),
                h("td", {}, secs(r.finished)), h("td", { class: "num" }, r.exit_code ?? "—"), h("td", {}, badge(r.state)),
                h("td", {}, h("button", { type: "button", class: "small", onclick: () => { shownLog = r.id; showLog(); } }, `Log of ${r.id}`)))),
            { "aria-label": "Runs" })
          : empty("No runs yet", "Run it now, or wait for its schedule."),
      ),
      logBox,
    );
    if (!shownLog && runs.length) shownLog = runs[0].id;
    if (shownLog) await showLog();
  }
  let shownLog = null;
  const logBox = h("div");
  async function showLog() {
    let text;
    try {
      text = await get(`/pipelines/${enc(name)}/runs/${enc(shownLog)}/log`);
    } catch (err) {
      text = null;
      clear(logBox, section(`Log of run ${shownLog}`, notice("error", err.message)));
      return;
    }
    const pre = h("pre", { class: "log", "aria-label": "Run log" }, text?.message ?? text ?? "");
    clear(logBox, section(`Log of run ${shownLog}`, String(pre.textContent).trim() ? pre : h("p", { class: "hint" }, "The run has written nothing yet.")));
    pre.scrollTop = pre.scrollHeight;
  }
  await refresh();
  const timer = setInterval(() => refresh().catch(() => {}), 3000);
  return () => clearInterval(timer);
}

function progress(p) {
  const keys = [["Batch", p.batchId], ["Input rows", fmtNum(p.numInputRows)], ["Input rows/s", p.inputRowsPerSecond], ["Processed rows/s", p.processedRowsPerSecond], ["At", p.timestamp]];
  return [
    table(["", ""], keys.filter(([, v]) => v !== undefined && v !== "—").map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, k), h("td", { class: "mono" }, String(v))))),
    h("details", {}, h("summary", {}, "Full progress"), h("pre", {}, JSON.stringify(p, null, 2))),
  ];
}
