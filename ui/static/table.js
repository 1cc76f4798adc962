// Sortable, filterable tables: every list in the console is one. Click a column heading (or
// focus it and press Enter) to sort, again to reverse; type in the filter box to keep rows
// whose cells contain the text. update(rows) redraws with new data and keeps sort, filter and
// focus, so live pages can refresh a table while someone is reading or typing.

import { empty, h } from "./dom.js";

/**
 * columns: [{label, value: row => sortable value, render?: row => node|string,
 *            text?: row => filter text, num?: bool, cls?: string, sortable?: bool}]
 * options: {label, columns, filter = true, emptyTitle, emptyHint, rowAttrs?: row => attrs,
 *           sort?: [columnIndex, 1|-1], key?: row => string (keeps a row's identity)}
 */
export function dataTable(options) {
  const { label, columns, filter = true } = options;
  let rows = [];
  let [sortIndex, direction] = options.sort || [null, 1];
  const search = filter ? h("input", { type: "search", placeholder: "Filter…", "aria-label": `Filter ${label}` }) : null;
  const count = h("span", { class: "count", "aria-live": "polite" });
  const head = h("thead");
  const body = h("tbody");
  const tableEl = h("table", { "aria-label": label }, head, body);
  const holder = h("div", {}, tableEl);

  const text = (col, row) => String((col.text ? col.text(row) : col.value(row)) ?? "");
  const compare = (a, b) => {
    if (a === b) return 0;
    if (a === null || a === undefined || a === "") return 1;
    if (b === null || b === undefined || b === "") return -1;
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b), undefined, { numeric: true });
  };

  // The heading row is built once (a focused sort button keeps focus across refreshes);
  // sorting only moves aria-sort.
  const headings = columns.map((col, i) => {
    const attrs = { scope: "col", class: col.num ? "num" : null };
    if (col.sortable === false || !col.label) return h("th", attrs, col.label || "");
    return h("th", attrs, h("button", {
      type: "button",
      class: "sort",
      onclick: () => {
        direction = sortIndex === i ? -direction : 1;
        sortIndex = i;
        draw();
      },
    }, col.label));
  });
  head.append(h("tr", {}, headings));

  function drawHead() {
    headings.forEach((th, i) => {
      if (sortIndex === i) th.setAttribute("aria-sort", direction > 0 ? "ascending" : "descending");
      else th.removeAttribute("aria-sort");
    });
  }

  function draw() {
    drawHead();
    const needle = search ? search.value.trim().toLowerCase() : "";
    let shown = needle ? rows.filter((row) => columns.some((col) => text(col, row).toLowerCase().includes(needle))) : [...rows];
    if (sortIndex !== null) {
      const col = columns[sortIndex];
      shown = shown.sort((a, b) => direction * compare(col.value(a), col.value(b)));
    }
    count.textContent = needle ? `${shown.length} of ${rows.length}` : `${rows.length}`;
    if (!rows.length) {
      holder.replaceChildren(empty(options.emptyTitle || "Nothing here yet", options.emptyHint));
      return;
    }
    holder.replaceChildren(tableEl);
    body.replaceChildren(
      ...(shown.length
        ? shown.map((row) =>
            h("tr", options.rowAttrs ? options.rowAttrs(row) : {}, columns.map((col) => {
              const content = col.render ? col.render(row) : col.value(row);
              return h("td", { class: [col.num ? "num" : "", col.cls || ""].join(" ").trim() || null }, content ?? "—");
            })),
          )
        : [h("tr", {}, h("td", { colspan: columns.length, class: "muted" }, `No row matches "${search.value.trim()}".`))]),
    );
  }

  if (search) search.addEventListener("input", draw);
  const tools = filter ? h("div", { class: "table-tools" }, search, count) : null;
  drawHead();
  return {
    element: h("div", { class: "data-table" }, tools, holder),
    table: tableEl,
    update(newRows) {
      rows = newRows || [];
      draw();
    },
  };
}
