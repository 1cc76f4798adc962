// The console's router: the URL hash names the page (#/topics/orders), so /ui/ is the only
// document the hub serves and links, reloads and the back button all work without a server
// route per page. Each page renders into <main> and may return a cleanup function (timers of
// live views) that runs when the user navigates away.

import { ApiError, get, session, signIn as login, signOut } from "./api.js";
import { clear, h, notice } from "./dom.js";
import { renderOverview } from "./pages/overview.js";
import { renderConnectors } from "./pages/connectors.js";
import { renderNewConnector } from "./pages/connector_new.js";
import { renderConnector } from "./pages/connector_detail.js";
import { renderTopics } from "./pages/topics.js";
import { renderTopic } from "./pages/topic_detail.js";
import { renderGroups } from "./pages/groups.js";
import { renderGroup } from "./pages/group_detail.js";
import { renderPipeline, renderPipelines } from "./pages/pipelines.js";
import { renderSchemas, renderSubject } from "./pages/schemas.js";
import { renderCluster } from "./pages/cluster.js";
import { renderTransactions } from "./pages/transactions.js";
import { renderSecurity } from "./pages/security.js";
import { renderWorkers } from "./pages/workers.js";
import { initTheme } from "./theme.js";

const routes = [
  [/^\/?$/, "overview", renderOverview],
  [/^\/connectors$/, "connectors", renderConnectors],
  [/^\/connectors\/new$/, "connectors", renderNewConnector],
  [/^\/connectors\/([^/]+)$/, "connectors", renderConnector],
  [/^\/topics$/, "topics", renderTopics],
  [/^\/topics\/([^/]+)$/, "topics", renderTopic],
  [/^\/groups$/, "groups", renderGroups],
  [/^\/groups\/([^/]+)$/, "groups", renderGroup],
  [/^\/pipelines$/, "pipelines", renderPipelines],
  [/^\/pipelines\/([^/]+)$/, "pipelines", renderPipeline],
  [/^\/schemas$/, "schemas", renderSchemas],
  [/^\/schemas\/([^/]+)$/, "schemas", renderSubject],
  [/^\/cluster$/, "cluster", renderCluster],
  [/^\/workers$/, "workers", renderWorkers],
  [/^\/transactions$/, "transactions", renderTransactions],
  [/^\/transactions\/([^/]+)$/, "transactions", renderTransactions],
  [/^\/security$/, "security", renderSecurity],
];

let cleanup = null;
let generation = 0;

async function route() {
  if (cleanup) cleanup();
  cleanup = null;
  const mine = ++generation;
  const path = decodeURIComponent(location.hash.replace(/^#/, "").split("?")[0]) || "/";
  const main = document.getElementById("main");
  const match = routes.map(([re, nav, fn]) => [path.match(re), nav, fn]).find(([m]) => m);
  for (const a of document.querySelectorAll("[data-nav]")) {
    if (match && a.dataset.nav === match[1]) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (!match) {
    clear(main, h("h1", {}, "Not found"), notice("error", `No page at ${path}.`));
    return;
  }
  const [m, , render] = match;
  clear(main, h("p", { class: "loading", role: "status" }, "Loading…"));
  try {
    const dispose = await render(main, ...m.slice(1).map(decodeURIComponent));
    if (mine !== generation) {
      if (typeof dispose === "function") dispose();
    } else {
      cleanup = typeof dispose === "function" ? dispose : null;
    }
  } catch (err) {
    if (mine !== generation) return;
    if (err instanceof ApiError && err.status === 401) return; // the sign-in form is showing
    clear(main, h("h1", {}, "Something went wrong"), notice("error", err.message));
  }
}

async function signIn() {
  const main = document.getElementById("main");
  let methods = ["token"];
  try {
    methods = (await session()).methods;
  } catch {
    /* keep the token field */
  }
  const error = h("div", {});
  const fields = [];
  if (methods.includes("token")) {
    fields.push(
      h("label", { for: "signin-token" }, "Token"),
      h("input", { id: "signin-token", name: "token", type: "password", autocomplete: "off" }),
      h("p", { class: "hint" }, "The hub's token: rest.auth.token, or the hub.token file in its data directory."),
    );
  }
  if (methods.includes("basic")) {
    if (fields.length) fields.push(h("p", { class: "hint" }, "…or user and password"));
    fields.push(
      h("label", { for: "signin-user" }, "User"),
      h("input", { id: "signin-user", name: "user", autocomplete: "username" }),
      h("label", { for: "signin-password" }, "Password"),
      h("input", { id: "signin-password", name: "password", type: "password" }),
    );
  }
  const form = h(
    "form",
    { class: "card narrow", "aria-labelledby": "signin-title" },
    h("h1", { id: "signin-title" }, "Sign in"),
    h("p", {}, "This hub's REST API requires credentials."),
    error,
    ...fields,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Sign in")),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const credentials = data.get("token")
      ? { token: data.get("token") }
      : { user: data.get("user") || "", password: data.get("password") || "" };
    try {
      await login(credentials);
    } catch (err) {
      clear(error, notice("error", err.status === 401 ? "Those credentials were not accepted." : err.message));
      return;
    }
    showSignOut(true);
    route();
    showCluster();
  });
  clear(main, form);
  form.querySelector("input").focus();
}

function showSignOut(visible) {
  document.getElementById("signout").hidden = !visible;
}

async function showCluster() {
  try {
    const info = await get("/");
    document.getElementById("cluster").textContent =
      `v${info.version} · cluster ${info.kafka_cluster_id}`;
  } catch {
    /* the page itself reports errors */
  }
}

// "Skip to content" must not touch the hash: the hash is the route.
document.querySelector(".skip").addEventListener("click", (event) => {
  event.preventDefault();
  document.getElementById("main").focus();
});
window.addEventListener("sluice:unauthorized", () => {
  showSignOut(false);
  signIn();
});
document.getElementById("signout").addEventListener("click", async () => {
  try {
    await signOut();
  } finally {
    showSignOut(false);
    signIn();
  }
});
window.addEventListener("hashchange", () => {
  route();
  document.getElementById("main").focus({ preventScroll: true });
});
initTheme();
session()
  .then((state) => showSignOut(state.required && state.signed_in))
  .catch(() => {});
route();
showCluster();
