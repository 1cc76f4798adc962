// Pipelines: Spark pipeline templates, defined pipelines with schedules and their runs, last
// progress; create, run now, stop, delete. Served only when the hub has the /pipelines API
// (hub/rest/pipelines.py); otherwise the page says so instead of failing.

import { ApiError, del, enc, get, post } from "../api.js";
import { badge, clear, empty, fmtNum, h, notice, section, table } from "../dom.js";

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
  // Pipelines usually read this cluster: offer its brokers as bootstrap_servers.
  const bootstrap = await get("/console/api/overview").then((o) => o.brokers.map((b) => `${b.host}:${b.port}`).join(","), () => "");
  const message = h("div", { "aria-live": "polite" });
  const list = Array.isArray(pipelines) ? pipelines : [];
  main.append(
    message,
    section(
      "Pipelines",
      list.length
        ? table(
            ["Name", "Template", "Schedule", "State", "Last run", ""],
            list.map((p) =>
              h(
                "tr",
                {},
                h("td", {}, h("a", { href: `#/pipelines/${enc(p.name)}` }, p.name)),
                h("td", {}, p.template || "—"),
                h("td", { class: "mono" }, p.schedule || "manual"),
                h("td", {}, badge(p.state)),
                h("td", {}, p.last_run ? [badge(p.last_run.state), " ", secs(p.last_run.started)] : "never"),
                h("td", {}, h("button", { type: "button", onclick: () => act(message, `Run ${p.name}`, () => post(`/pipelines/${enc(p.name)}/run`)) }, `Run ${p.name} now`)),
              ),
            ),
            { "aria-label": "Pipelines" },
          )
        : empty("No pipelines yet", "Create one from a template below."),
    ),
    templates.length ? createCard(templates, bootstrap) : null,
    templates.length
      ? section("Templates", table(["Template", "What it does"], templates.map((t) => h("tr", {}, h("td", { class: "mono" }, t.name), h("td", {}, t.description || "—"))), { "aria-label": "Templates" }))
      : null,
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

function createCard(templates, bootstrap) {
  const select = h("select", { id: "pipeline-template", name: "template" }, templates.map((t) => h("option", { value: t.name }, t.name)));
  const config = h("textarea", { id: "pipeline-config", name: "config", rows: 10, spellcheck: "false" });
  const fill = () => {
    const t = templates.find((x) => x.name === select.value);
    const cfg = skeleton(t?.config_schema);
    for (const part of [cfg, ...Object.values(cfg)]) {
      if (part && typeof part === "object" && part.bootstrap_servers === "") part.bootstrap_servers = bootstrap;
    }
    config.value = JSON.stringify(cfg, null, 2);
  };
  select.addEventListener("change", fill);
  fill();
  const out = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { "aria-label": "Create pipeline" },
    h(
      "div",
      { class: "inline" },
      h("div", {}, h("label", { for: "pipeline-name" }, "Name"), h("input", { id: "pipeline-name", name: "name", required: true })),
      h("div", {}, h("label", { for: "pipeline-template" }, "Template"), select),
      h("div", {}, h("label", { for: "pipeline-schedule" }, "Schedule (cron, UTC; empty = manual)"), h("input", { id: "pipeline-schedule", name: "schedule", placeholder: "*/15 * * * *" })),
    ),
    h("label", { for: "pipeline-config" }, "Template config (JSON)"),
    config,
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
      const reasons = Object.entries(err.errors || {}).map(([k, v]) => h("li", {}, `${k}: ${[].concat(v).join(" ")}`));
      clear(out, notice("error", err.message, reasons.length ? h("ul", {}, reasons) : null));
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
          ? table(["Run", "Trigger", "Started", "Finished", "Exit code", "State"], runs.map((r) =>
              h("tr", {}, h("td", { class: "mono" }, r.id), h("td", {}, r.trigger || "—"), h("td", {}, secs(r.started)),
                h("td", {}, secs(r.finished)), h("td", { class: "num" }, r.exit_code ?? "—"), h("td", {}, badge(r.state)))),
            { "aria-label": "Runs" })
          : empty("No runs yet", "Run it now, or wait for its schedule."),
      ),
    );
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
