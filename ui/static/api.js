// Calls to the hub's REST API (Kafka Connect paths) and the console API (/console/api).
// Errors become ApiError carrying Connect's {error_code, message, errors} body, so pages can
// show the message and put per-field reasons next to their fields.
//
// Authentication: signing in (POST /console/login) sets an HttpOnly session cookie, which the
// browser sends with every same-origin call; no script ever holds the token. Every call that
// changes state says Content-Type: application/json, bodies or not: with the Origin the
// browser adds, that is what the hub requires of cookie-authenticated changes (CSRF defence).

import { report } from "./connection.js";

export class ApiError extends Error {
  constructor(status, message, errors) {
    super(message);
    this.status = status;
    this.errors = errors || {};
  }
}

export async function request(method, path, body) {
  const headers = { Accept: "application/json" };
  if (method !== "GET" && method !== "HEAD") headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    report("hub", false);
    throw new ApiError(0, `The hub did not answer (${err.message}). Is it running?`);
  }
  report("hub", true);
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { message: text };
    }
  }
  const console = path.startsWith("/console/api/");
  if (console && response.status === 503) report("kafka", false, data && data.message);
  else if (console && response.ok) report("kafka", true);
  if (!response.ok) {
    const message = (data && data.message) || `${response.status} ${response.statusText}`;
    const error = new ApiError(response.status, message, data && data.errors);
    if (response.status === 401 && !path.startsWith("/console/login")) {
      window.dispatchEvent(new CustomEvent("sluice:unauthorized"));
    }
    throw error;
  }
  return data;
}

export const get = (path) => request("GET", path);
export const post = (path, body) => request("POST", path, body);
export const put = (path, body) => request("PUT", path, body);
export const patch = (path, body) => request("PATCH", path, body);
export const del = (path) => request("DELETE", path);

export const enc = encodeURIComponent;

/** {required, signed_in, methods}: whether the hub wants a sign-in, and with what. */
export const session = () => get("/console/session");
/** Signs in with {token} or {user, password}; the hub answers with the session cookie. */
export const signIn = (credentials) => post("/console/login", credentials);
export const signOut = () => post("/console/logout");
