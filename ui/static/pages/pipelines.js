// Pipelines: Spark pipeline templates, pipelines with their schedules, and recent runs, when
// this hub serves the /pipelines API; a clear "not available" state otherwise.

import { ApiError, get } from "../api.js";
import { clear, empty, h, notice, section, table } from "../dom.js";

function cell(value) {
  if (value === null || value === undefined || value === "") return "—";
  if (typeof value === "object") return h("pre", {}, JSON.stringify(value, null, 2));
  return String(value);
}

/** A table of a list of objects (or names), columns from their keys: the API's shape decides. */
function listTable(items, label) {
  if (!items.length) return empty(`No ${label.toLowerCase()}`);
  const rows = items.map((item) => (item && typeof item === "object" ? item : { name: item }));
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))].slice(0, 8);
  return table(keys, rows.map((r) => h("tr", {}, keys.map((k) => h("td", {}, cell(r[k]))))), { "aria-label": label });
}

async function optional(path) {
  try {
    return await get(path);
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 405)) return null;
    throw err;
  }
}

export async function renderPipelines(main) {
  clear(main, h("h1", {}, "Pipelines"));
  const pipelines = await optional("/pipelines");
  if (pipelines === null) {
    main.append(
      h("div", { class: "card" }, empty(
        "Pipelines are not available on this hub",
        h("span", {}, "This hub does not serve the ", h("code", {}, "/pipelines"), " API. Spark pipelines can still run with ", h("code", {}, "sluice pipelines run"), "."),
      )),
    );
    return;
  }
  const [templates, runs] = await Promise.all([optional("/pipelines/templates"), optional("/pipelines/runs")]);
  const list = Array.isArray(pipelines) ? pipelines : Object.entries(pipelines).map(([name, v]) => ({ name, ...(typeof v === "object" ? v : { value: v }) }));
  if (templates) main.append(section("Templates", listTable(Array.isArray(templates) ? templates : Object.values(templates), "Templates")));
  main.append(section("Pipelines", listTable(list, "Pipelines")));
  if (runs) main.append(section("Recent runs", listTable(Array.isArray(runs) ? runs : Object.values(runs), "Runs")));
  if (!templates && !runs) main.append(notice("info", "Templates and runs are listed by the pipelines API when it offers them."));
}
