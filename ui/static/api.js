// Calls to the hub's REST API (Kafka Connect paths) and the console API (/console/api).
// Errors become ApiError carrying Connect's {error_code, message, errors} body, so pages can
// show the message and put per-field reasons next to their fields.

const AUTH_KEY = "sluice.console.auth";

export class ApiError extends Error {
  constructor(status, message, errors) {
    super(message);
    this.status = status;
    this.errors = errors || {};
  }
}

/** The Authorization header value the user signed in with (kept for this browser tab only). */
export function authHeader() {
  return sessionStorage.getItem(AUTH_KEY);
}

export function setAuth(value) {
  if (value) sessionStorage.setItem(AUTH_KEY, value);
  else sessionStorage.removeItem(AUTH_KEY);
}

export async function request(method, path, body) {
  const headers = { Accept: "application/json" };
  const auth = authHeader();
  if (auth) headers.Authorization = auth;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(0, `The hub did not answer (${err.message}). Is it running?`);
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { message: text };
    }
  }
  if (!response.ok) {
    const message = (data && data.message) || `${response.status} ${response.statusText}`;
    const error = new ApiError(response.status, message, data && data.errors);
    if (response.status === 401) window.dispatchEvent(new CustomEvent("sluice:unauthorized"));
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
