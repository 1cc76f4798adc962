// Schema registry: subjects with their versions, schema type and compatibility level, and one
// subject's versions with each schema. Read-only; `sluice schemas` and the registry's own REST
// API change things.

import { enc, get } from "../api.js";
import { badge, clear, empty, h, notice, section } from "../dom.js";
import { dataTable } from "../table.js";

export async function renderSchemas(main) {
  const data = await get("/console/api/schemas");
  clear(main, h("h1", {}, "Schemas"));
  if (!data.configured) {
    main.append(notice("info", "No schema registry is configured for this hub (worker setting schema.registry.url; sluice up serves one on port 8081)."));
    return;
  }
  main.append(h("p", { class: "hint" }, `Registry: ${data.url}`));
  if (!data.subjects.length) {
    main.append(h("div", { class: "card" }, empty("No subjects", "Converters register schemas as they write (AvroConverter, ProtobufConverter, JsonSchemaConverter).")));
    return;
  }
  const subjects = dataTable({
    label: "Subjects",
    sort: [0, 1],
    columns: [
      { label: "Subject", value: (s) => s.subject, render: (s) => h("a", { href: `#/schemas/${enc(s.subject)}` }, s.subject) },
      { label: "Type", value: (s) => s.type },
      { label: "Versions", value: (s) => s.versions.length, text: (s) => s.versions.join(", "), render: (s) => s.versions.join(", ") },
      { label: "Latest id", value: (s) => s.latest_id, num: true },
      { label: "Compatibility", value: (s) => s.compatibility, render: (s) => badge(s.compatibility) },
    ],
  });
  subjects.update(data.subjects);
  main.append(h("div", { class: "card" }, subjects.element));
}

function prettySchema(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export async function renderSubject(main, subject) {
  const data = await get(`/console/api/schemas/${enc(subject)}`);
  clear(
    main,
    h("div", { class: "crumbs" }, h("a", { href: "#/schemas" }, "Schemas"), ` / ${subject}`),
    h("h1", {}, subject, badge(data.compatibility)),
    ...data.versions
      .slice()
      .reverse()
      .map((v) => section(`Version ${v.version} · id ${v.id} · ${v.type}`, h("pre", { class: "schema-text" }, prettySchema(v.schema)))),
  );
}
