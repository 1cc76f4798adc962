// New connector: pick a plugin, fill the form generated from its config keys
// (GET /connector-plugins/{type}/config), validate (PUT .../config/validate) with each reason
// shown under its field, then create; or paste a Kafka Connect JSON config.

import { ApiError, enc, get, post, put } from "../api.js";
import { clear, empty, h, notice, section } from "../dom.js";

export async function renderNewConnector(main) {
  const plugins = await get("/connector-plugins");
  clear(main, h("div", { class: "crumbs" }, h("a", { href: "#/connectors" }, "Connectors"), " / new"), h("h1", {}, "New connector"));
  const tabs = h("div", { class: "tabs", role: "tablist" });
  const panel = h("div");
  const pick = h("button", { type: "button", role: "tab", "aria-selected": "true" }, "From a plugin");
  const paste = h("button", { type: "button", role: "tab", "aria-selected": "false" }, "Paste JSON");
  const select = (which) => {
    pick.setAttribute("aria-selected", String(which === pick));
    paste.setAttribute("aria-selected", String(which === paste));
    clear(panel, which === pick ? pluginChooser(plugins, panel) : pasteForm());
  };
  pick.addEventListener("click", () => select(pick));
  paste.addEventListener("click", () => select(paste));
  tabs.append(pick, paste);
  main.append(section("Create", tabs, panel));
  select(pick);
}

function pluginChooser(plugins, panel) {
  if (!plugins.length) return empty("No connector plugins installed");
  const sorted = [...plugins].sort((a, b) => a.type.localeCompare(b.type) || a.class.localeCompare(b.class));
  return [
    h("p", {}, "Choose a plugin:"),
    h(
      "div",
      { class: "plugins" },
      sorted.map((p) =>
        h("button", { type: "button", onclick: () => showForm(panel, p) }, h("strong", {}, p.class), h("small", {}, `${p.type} · ${p.version}`)),
      ),
    ),
  ];
}

/** The allowed values of a key from the plugin's JSON Schema (enum, or an enum in anyOf). */
function choicesOf(schema, name) {
  const prop = schema?.properties?.[name];
  if (!prop) return null;
  const resolve = (p) => (p.$ref ? schema.$defs?.[p.$ref.split("/").pop()] || {} : p);
  const direct = resolve(prop);
  if (Array.isArray(direct.enum)) return direct.enum;
  for (const option of prop.anyOf || []) {
    const r = resolve(option);
    if (Array.isArray(r.enum)) return r.enum;
  }
  return null;
}

const hasDefault = (key) => typeof key.default_value === "string" && key.default_value !== "";

function inputFor(key, schema) {
  const id = `field-${key.name.replace(/[^a-zA-Z0-9_-]/g, "-")}`;
  const attrs = { id, name: key.name, "aria-describedby": `${id}-help ${id}-err` };
  const choices = choicesOf(schema, key.name);
  let input;
  if (key.type === "BOOLEAN") {
    input = h("select", attrs, h("option", { value: "" }, "(default)"), h("option", { value: "true" }, "true"), h("option", { value: "false" }, "false"));
  } else if (choices) {
    const none = hasDefault(key) ? `(default: ${key.default_value})` : key.required ? "Choose…" : "(not set)";
    input = h("select", attrs, h("option", { value: "" }, none), choices.map((c) => h("option", { value: String(c) }, String(c))));
  } else if (["INT", "LONG", "SHORT", "DOUBLE"].includes(key.type)) {
    input = h("input", { ...attrs, inputmode: "decimal" });
  } else {
    input = h("input", { ...attrs, type: key.type === "PASSWORD" ? "password" : "text" });
  }
  if (hasDefault(key) && input.tagName === "INPUT") input.placeholder = key.default_value;
  const label = `${key.display_name || key.name}${key.required ? " *" : ""}`;
  const help = [key.documentation, hasDefault(key) ? ` Default: ${key.default_value}.` : ""].join("");
  return h(
    "div",
    { class: "field", "data-field": key.name },
    h("label", { for: id }, label, key.display_name && key.display_name !== key.name ? [" ", h("code", { class: "muted" }, key.name)] : null),
    input,
    h("p", { class: "hint", id: `${id}-help` }, help),
    h("ul", { class: "field-error", id: `${id}-err` }),
  );
}

async function showForm(panel, plugin) {
  const [keys, schema] = await Promise.all([
    get(`/connector-plugins/${enc(plugin.class)}/config`),
    get(`/console/api/connector-plugins/${enc(plugin.class)}/schema`).catch(() => null),
  ]);
  const common = [
    { name: "name", type: "STRING", required: true, documentation: "A unique name for this connector." },
    { name: "tasks.max", type: "INT", required: false, default_value: "1", documentation: "Most tasks to run." },
  ];
  // The plugin's own order; low-importance optional keys fold away under "Advanced settings".
  // Keys documented as internal (set by the runtime per task) fold away too.
  const minor = (k) => !k.required && (k.importance === "LOW" || /^internal\b/i.test(k.documentation || ""));
  const primary = keys.filter((k) => !minor(k));
  const advanced = keys.filter(minor);
  const summary = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { novalidate: true, "aria-label": `${plugin.class} connector` },
    h("h2", {}, plugin.class, " ", h("small", { class: "muted" }, plugin.type)),
    h("div", { class: "fields" }, common.concat(primary).map((k) => inputFor(k, schema))),
    advanced.length ? h("details", {}, h("summary", {}, `Advanced settings (${advanced.length})`), h("div", { class: "fields" }, advanced.map((k) => inputFor(k, schema)))) : null,
    summary,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "validate" }, "Validate"),
      h("button", { type: "submit", class: "primary" }, "Create connector"),
      h("button", { type: "button", onclick: () => renderNewConnector(document.getElementById("main")) }, "Back"),
    ),
  );
  const config = () => {
    const out = { "connector.class": plugin.class };
    for (const el of form.querySelectorAll("input, select")) if (el.value.trim() !== "") out[el.name] = el.value.trim();
    return out;
  };
  const validate = async () => {
    const cfg = config();
    const result = await put(`/connector-plugins/${enc(plugin.class)}/config/validate`, cfg);
    const errors = {};
    for (const c of result.configs) if (c.value.errors.length) errors[c.value.name] = c.value.errors;
    showErrors(form, summary, errors);
    return { cfg, ok: result.error_count === 0 };
  };
  form.querySelector("button.validate").addEventListener("click", async () => {
    try {
      const { ok } = await validate();
      if (ok) clear(summary, notice("ok", "The configuration is valid."));
    } catch (err) {
      clear(summary, notice("error", err.message));
    }
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const { cfg, ok } = await validate();
      if (!ok) return;
      const { name, ...rest } = cfg;
      await post("/connectors", { name, config: rest });
      location.hash = `#/connectors/${enc(name)}`;
    } catch (err) {
      if (err instanceof ApiError) showErrors(form, summary, err.errors, err.message);
      else clear(summary, notice("error", err.message));
    }
  });
  clear(panel, form);
  form.querySelector("input").focus();
}

function showErrors(form, summary, errors, message) {
  const unplaced = [];
  errors = Object.fromEntries(Object.entries(errors || {}).map(([k, v]) => [k, [...new Set([].concat(v))]]));
  for (const field of form.querySelectorAll("[data-field]")) {
    const reasons = errors[field.dataset.field];
    const input = field.querySelector("input, select");
    clear(field.querySelector(".field-error"), (reasons || []).map((r) => h("li", {}, r)));
    if (reasons) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
    if (reasons && field.closest("details")) field.closest("details").open = true;
  }
  for (const [name, reasons] of Object.entries(errors)) {
    if (!form.querySelector(`[data-field="${CSS.escape(name)}"]`)) unplaced.push(...reasons.map((r) => `${name}: ${r}`));
  }
  const count = Object.keys(errors).length;
  if (!count && !message) {
    clear(summary);
    return;
  }
  clear(
    summary,
    notice(
      "error",
      message || `Fix ${count} field${count === 1 ? "" : "s"} before creating the connector.`,
      unplaced.length ? h("ul", {}, unplaced.map((u) => h("li", {}, u))) : null,
    ),
  );
  const first = form.querySelector('[aria-invalid="true"]');
  if (first) first.focus();
}

function pasteForm() {
  const text = h("textarea", { id: "paste-json", name: "json", rows: 14, spellcheck: "false" });
  text.value = JSON.stringify({ name: "my-connector", config: { "connector.class": "file-source", file: "/var/log/app.log", topic: "app-logs" } }, null, 2);
  const summary = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { "aria-label": "Connector JSON" },
    h("label", { for: "paste-json" }, "Kafka Connect JSON: {\"name\", \"config\"} or a flat config with \"name\""),
    text,
    summary,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Create connector")),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    let body;
    try {
      body = JSON.parse(text.value);
    } catch (err) {
      clear(summary, notice("error", `Not valid JSON: ${err.message}`));
      return;
    }
    if (!body.config) {
      const { name, ...config } = body;
      body = { name, config };
    }
    try {
      await post("/connectors", body);
      location.hash = `#/connectors/${enc(body.name)}`;
    } catch (err) {
      const reasons = Object.entries(err.errors || {}).flatMap(([k, v]) => [...new Set([].concat(v))].map((r) => h("li", {}, `${k}: ${r}`)));
      clear(summary, notice("error", err.message, reasons.length ? h("ul", {}, reasons) : null));
    }
  });
  return form;
}
