// Security: the cluster's ACLs (list, filter, add, delete after a confirmation), SCRAM users
// (names and mechanisms only — the broker never returns secrets and the page never shows the
// password it sends) and client quotas (list, set, remove). Everything goes through the console
// API (/console/api/security), which uses the Kafka admin APIs, so it works on any cluster.

import { del, enc, get, post } from "../api.js";
import { confirmAction, confirmByName } from "../dialog.js";
import { clear, fmtNum, h, notice, section } from "../dom.js";
import { dataTable } from "../table.js";

const RESOURCE_TYPES = ["TOPIC", "GROUP", "TRANSACTIONAL_ID", "CLUSTER"];
const OPERATIONS = ["READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "ALL"];
const QUOTAS = [["producer_byte_rate", "Produce bytes/s"], ["consumer_byte_rate", "Fetch bytes/s"], ["request_percentage", "Request time %"]];
const DEFAULT = "<default>";

const field = (id, label, input) => h("div", {}, h("label", { for: id }, label), input);
const select = (id, options, value) => h("select", { id, name: id }, options.map((o) => h("option", { value: o, selected: o === value ? true : null }, o)));
const entityName = (name) => (name === null ? "" : name === "" ? DEFAULT : name);

export async function renderSecurity(main) {
  const acls = aclSection();
  const users = userSection();
  const quotas = quotaSection();
  clear(main, h("h1", {}, "Security"), h("div", { class: "live-kafka" }, acls.element, users.element, quotas.element));
  const refresh = () => Promise.all([acls.refresh(), users.refresh(), quotas.refresh()]);
  await refresh();
  const timer = setInterval(refresh, 10000);
  return () => clearInterval(timer);
}

function reporter() {
  const el = h("div", { "aria-live": "polite" });
  return { el, ok: (text) => clear(el, notice("ok", text)), error: (err) => clear(el, notice("error", err.message)), clear: () => clear(el) };
}

// Each section loads on its own: a cluster that refuses one API (no quota support, no rights
// to list users) still shows the others. Unreachable hub or cluster: the banner says so.
function loader(load) {
  const status = h("div");
  const refresh = async () => {
    try {
      await load();
      clear(status);
    } catch (err) {
      if (err.status !== 503 && err.status !== 0) clear(status, notice("error", err.message));
    }
  };
  return { status, refresh };
}

function aclSection() {
  const out = reporter();
  const state = h("p", { class: "hint" });
  const list = dataTable({
    label: "ACLs",
    sort: [0, 1],
    emptyTitle: "No ACLs",
    emptyHint: "Add one below. With no ACL on a resource, only super users may use it (unless allow.everyone.if.no.acl.found).",
    columns: [
      { label: "Resource", value: (a) => `${a.resource_type}:${a.resource_name}`, cls: "mono" },
      { label: "Pattern", value: (a) => a.pattern_type },
      { label: "Principal", value: (a) => a.principal, cls: "mono" },
      { label: "Host", value: (a) => a.host },
      { label: "Operation", value: (a) => a.operation },
      { label: "Permission", value: (a) => a.permission, render: (a) => h("span", { class: `badge state-${a.permission === "ALLOW" ? "running" : "failed"}` }, a.permission) },
      { label: "", sortable: false, value: () => "", render: (a) => h("button", { type: "button", class: "danger small", "aria-label": `Delete ACL ${a.permission} ${a.principal} ${a.operation} on ${a.resource_type}:${a.resource_name}`, onclick: () => remove(a) }, "Delete") },
    ],
  });
  async function remove(a) {
    const what = `${a.permission} ${a.principal} ${a.operation} on ${a.resource_type}:${a.resource_name} (${a.pattern_type}, host ${a.host})`;
    if (!(await confirmAction("Delete ACL", h("p", {}, what), "Delete ACL", true))) return;
    try {
      const { removed } = await post("/console/api/security/acls/delete", a);
      out.ok(`Deleted ${removed} ACL.`);
      await refresh();
    } catch (err) {
      out.error(err);
    }
  }
  const form = h(
    "form",
    { "aria-label": "Add ACL" },
    h("div", { class: "inline" },
      field("acl-principal", "Principal", h("input", { id: "acl-principal", required: true, placeholder: "User:alice" })),
      field("acl-permission", "Permission", select("acl-permission", ["ALLOW", "DENY"], "ALLOW")),
      field("acl-operation", "Operation", select("acl-operation", OPERATIONS, "READ")),
      field("acl-resource-type", "Resource type", select("acl-resource-type", RESOURCE_TYPES, "TOPIC")),
      field("acl-resource-name", "Resource name", h("input", { id: "acl-resource-name", placeholder: "orders, or * for all" })),
      field("acl-pattern", "Pattern", select("acl-pattern", ["LITERAL", "PREFIXED"], "LITERAL")),
      field("acl-host", "Host", h("input", { id: "acl-host", value: "*" })),
      h("div", {}, h("button", { type: "submit", class: "primary" }, "Add ACL"))),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const v = (id) => form.querySelector(`#${id}`).value.trim();
    try {
      await post("/console/api/security/acls", {
        principal: v("acl-principal"), permission: v("acl-permission"), operation: v("acl-operation"),
        resource_type: v("acl-resource-type"), resource_name: v("acl-resource-name"), pattern_type: v("acl-pattern"), host: v("acl-host"),
      });
      out.ok("ACL added.");
      await refresh();
    } catch (err) {
      out.error(err);
    }
  });
  const { status, refresh } = loader(async () => {
    const answer = await get("/console/api/security/acls");
    clear(state, answer.enabled ? null : "This cluster has no authorizer (authorizer.class.name): every request is allowed and ACLs cannot be stored.");
    list.update(answer.acls);
  });
  const element = section("ACLs", status, state, out.el, list.element, h("details", {}, h("summary", {}, "Add an ACL"), form));
  return { element, refresh };
}

function userSection() {
  const out = reporter();
  const list = dataTable({
    label: "SCRAM users",
    sort: [0, 1],
    emptyTitle: "No SCRAM users",
    emptyHint: "Create one below; clients then sign in with SASL/SCRAM-SHA-256 or -512.",
    columns: [
      { label: "User", value: (u) => u.user, cls: "mono" },
      { label: "Mechanisms", value: (u) => u.mechanisms.map((m) => `${m.mechanism} (${fmtNum(m.iterations)} iterations)`).join(", ") },
      { label: "", sortable: false, value: () => "", render: (u) => h("button", { type: "button", class: "danger small", "aria-label": `Delete user ${u.user}`, onclick: () => remove(u.user) }, "Delete") },
    ],
  });
  async function remove(user) {
    if (!(await confirmByName(`Delete user ${user}`, user, h("p", {}, "Its SCRAM credentials are removed: clients signing in as this user are refused from now on.")))) return;
    try {
      await del(`/console/api/security/users/${enc(user)}`);
      out.ok(`User ${user} deleted.`);
      await refresh();
    } catch (err) {
      out.error(err);
    }
  }
  const mechanism = (m) => h("label", { class: "check" }, h("input", { type: "checkbox", name: "mechanism", value: m, checked: true }), ` ${m}`);
  const password = h("input", { id: "user-password", type: "password", autocomplete: "new-password", required: true });
  const form = h(
    "form",
    { "aria-label": "Create user" },
    h("div", { class: "inline" },
      field("user-name", "User", h("input", { id: "user-name", required: true, autocomplete: "off" })),
      field("user-password", "Password", password),
      h("div", {}, h("span", { class: "muted" }, "Mechanisms"), mechanism("SCRAM-SHA-256"), mechanism("SCRAM-SHA-512")),
      h("div", {}, h("button", { type: "submit", class: "primary" }, "Create or set password"))),
    h("p", { class: "hint" }, "The password goes to the broker, which keeps only a salted hash; the console never shows or logs it."),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const user = form.querySelector("#user-name").value.trim();
    const mechanisms = [...form.querySelectorAll("input[name=mechanism]:checked")].map((i) => i.value);
    const secret = password.value;
    password.value = ""; // not kept in the page once sent
    try {
      await post("/console/api/security/users", { user, password: secret, mechanisms });
      out.ok(`User ${user}: ${mechanisms.join(", ") || "SCRAM-SHA-256, SCRAM-SHA-512"} credentials set.`);
      await refresh();
    } catch (err) {
      out.error(err);
    }
  });
  const { status, refresh } = loader(async () => list.update(await get("/console/api/security/users")));
  return { element: section("SCRAM users", status, out.el, list.element, h("details", {}, h("summary", {}, "Create a user or set a password"), form)), refresh };
}

function quotaSection() {
  const out = reporter();
  let rows = [];
  const list = dataTable({
    label: "Client quotas",
    sort: [0, 1],
    emptyTitle: "No client quotas",
    emptyHint: "Without a quota a client is not throttled.",
    columns: [
      { label: "User", value: (q) => entityName(q.user), cls: "mono" },
      { label: "Client id", value: (q) => entityName(q.client_id), cls: "mono" },
      ...QUOTAS.map(([key, label]) => ({ label, num: true, value: (q) => q.quotas[key] ?? null, render: (q) => (key in q.quotas ? fmtNum(q.quotas[key]) : "—") })),
      { label: "", sortable: false, value: () => "", render: (q) => h("button", { type: "button", class: "small", "aria-label": `Edit quotas of ${entityName(q.user)} ${entityName(q.client_id)}`.trim(), onclick: () => edit(q) }, "Edit") },
    ],
  });
  const input = (id, attrs) => h("input", { id, ...attrs });
  const form = h(
    "form",
    { "aria-label": "Set quotas" },
    h("div", { class: "inline" },
      field("quota-user", "User", input("quota-user", { placeholder: `name, ${DEFAULT} or empty` })),
      field("quota-client", "Client id", input("quota-client", { placeholder: `id, ${DEFAULT} or empty` })),
      ...QUOTAS.map(([key, label]) => field(`quota-${key}`, label, input(`quota-${key}`, { type: "number", min: 0, step: "any", placeholder: "no quota" }))),
      h("div", {}, h("button", { type: "submit", class: "primary" }, "Save quotas"))),
    h("p", { class: "hint" }, `An entity is a user, a client id or both; ${DEFAULT} is the default for every user (or client id) without its own quota. An empty quota field removes that quota.`),
  );
  const details = h("details", {}, h("summary", {}, "Set quotas"), form);
  const v = (id) => form.querySelector(`#${id}`).value.trim();
  function edit(q) {
    form.querySelector("#quota-user").value = entityName(q.user);
    form.querySelector("#quota-client").value = entityName(q.client_id);
    for (const [key] of QUOTAS) form.querySelector(`#quota-${key}`).value = key in q.quotas ? String(q.quotas[key]) : "";
    details.open = true;
    form.querySelector(`#quota-${QUOTAS[0][0]}`).focus();
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const part = (text) => (text === "" ? undefined : text === DEFAULT ? "" : text);
    const entity = { user: part(v("quota-user")), client_id: part(v("quota-client")) };
    const current = rows.find((q) => (q.user ?? undefined) === entity.user && (q.client_id ?? undefined) === entity.client_id);
    const set = {};
    const remove = [];
    for (const [key] of QUOTAS) {
      const value = v(`quota-${key}`);
      if (value !== "") set[key] = Number(value);
      else if (current && key in current.quotas) remove.push(key);
    }
    try {
      await post("/console/api/security/quotas", { entity, set, remove });
      out.ok("Quotas saved.");
      await refresh();
    } catch (err) {
      out.error(err);
    }
  });
  const { status, refresh } = loader(async () => {
    rows = await get("/console/api/security/quotas");
    list.update(rows);
  });
  return { element: section("Client quotas", status, out.el, list.element, details), refresh };
}
