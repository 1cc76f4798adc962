// How a browsed record's value (or key) is shown: auto (registry formats decoded by the hub,
// JSON pretty-printed, Kafka Connect's {"schema", "payload"} wrapper unwrapped, other bytes as
// hex), or forced to string, JSON, hex or base64. Works from the API's fields: text or base64
// and, for registry-decoded values, the original bytes in *_raw.

export const MODES = [
  ["auto", "Auto"],
  ["string", "String"],
  ["json", "JSON"],
  ["hex", "Hex"],
  ["base64", "Base64"],
];
const REGISTRY = new Set(["avro", "protobuf", "json-schema"]);

/** The record part's original bytes (Uint8Array), or null for a null key / tombstone. */
export function bytesOf(record, part) {
  const text = record[part];
  if (text === null || text === undefined) return null;
  const raw = record[`${part}_raw`];
  if (raw) return fromBase64(raw);
  if (record[`${part}_encoding`] === "base64") return fromBase64(text);
  return new TextEncoder().encode(text);
}

function fromBase64(text) {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i += 1) out[i] = bin.charCodeAt(i);
  return out;
}

function toBase64(bytes) {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

function toHex(bytes, wrap) {
  const pairs = Array.from(bytes, (b) => b.toString(16).padStart(2, "0"));
  if (!wrap) return pairs.join(" ");
  const lines = [];
  for (let i = 0; i < pairs.length; i += 16) lines.push(`${i.toString(16).padStart(6, "0")}  ${pairs.slice(i, i + 16).join(" ")}`);
  return lines.join("\n");
}

function parseJson(text) {
  const t = String(text).trim();
  if (!(t.startsWith("{") || t.startsWith("["))) return undefined;
  try {
    return JSON.parse(t);
  } catch {
    return undefined;
  }
}

/** A Connect JsonConverter envelope (schemas.enable=true): {"schema": {...}, "payload": ...}. */
export function connectEnvelope(doc) {
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) return null;
  const keys = Object.keys(doc);
  if (keys.length !== 2 || !("schema" in doc) || !("payload" in doc)) return null;
  return doc.schema && typeof doc.schema === "object" ? doc : null;
}

/**
 * {text, kind, note, json?, schema?}: the part shown under `mode` (wrap: multi-line form for
 * the detail panel). kind names what it is: "null", "json", "text", "hex", "base64", or a
 * registry format; note says what was done (unwrapped, not JSON, ...).
 */
export function decode(record, part, mode, wrap = true) {
  const text = record[part];
  const encoding = record[`${part}_encoding`];
  if (text === null || text === undefined) return { text: "null", kind: "null", note: part === "value" ? "tombstone" : "" };
  const pretty = (doc) => (wrap ? JSON.stringify(doc, null, 2) : JSON.stringify(doc));
  if (mode === "hex") return { text: toHex(bytesOf(record, part), wrap), kind: "hex" };
  if (mode === "base64") return { text: toBase64(bytesOf(record, part)), kind: "base64" };
  if (mode === "string") {
    const bytes = bytesOf(record, part);
    return { text: new TextDecoder("utf-8", { fatal: false }).decode(bytes), kind: "text" };
  }
  if (REGISTRY.has(encoding)) {
    const doc = parseJson(text);
    const schemaId = record[`${part}_schema_id`];
    return { text: doc === undefined ? text : pretty(doc), kind: encoding, json: doc, note: `schema id ${schemaId}` };
  }
  if (encoding === "base64") {
    if (mode === "json") return { text: "Not JSON: the bytes are not UTF-8 text.", kind: "error" };
    return { text: toHex(bytesOf(record, part), wrap), kind: "hex", note: "binary: shown as hex" };
  }
  const doc = parseJson(text);
  if (doc === undefined) {
    if (mode === "json") return { text: `Not JSON: ${text}`, kind: "error" };
    return { text, kind: "text" };
  }
  const envelope = mode === "auto" ? connectEnvelope(doc) : null;
  if (envelope) {
    return { text: pretty(envelope.payload), kind: "json", json: envelope.payload, schema: envelope.schema, note: "Kafka Connect JSON: payload shown, schema unwrapped" };
  }
  return { text: pretty(doc), kind: "json", json: doc };
}
