// Which part is unreachable, said once for every page: the hub itself (no HTTP answer at all)
// or the Kafka cluster behind it (the console API answers 503). api.js reports every call's
// outcome here; the banner under the top bar names the part and since when, and <body
// data-hub|data-kafka="down"> greys out everything pages marked live (class "live" for data
// from the hub, "live-kafka" for broker data), so old numbers never pass for current ones.

const state = { hub: null, kafka: null }; // null = fine; else {since, message}

function stamp(ms) {
  return new Date(ms).toLocaleTimeString();
}

function render() {
  const banner = document.getElementById("banner");
  if (!banner) return;
  document.body.dataset.hub = state.hub ? "down" : "up";
  document.body.dataset.kafka = state.kafka ? "down" : "up";
  const down = state.hub || state.kafka;
  banner.hidden = !down;
  if (!down) {
    banner.replaceChildren();
    return;
  }
  const title = document.createElement("div");
  const hint = document.createElement("div");
  hint.className = "hint";
  if (state.hub) {
    title.textContent = `The hub is not answering (${location.host}) since ${stamp(state.hub.since)}.`;
    hint.textContent = "Greyed-out data is from before then and may be out of date; the page keeps retrying.";
  } else {
    title.textContent = `The hub cannot reach the Kafka cluster since ${stamp(state.kafka.since)}.`;
    hint.textContent = `${state.kafka.message} Topic, group and message data is greyed out until the cluster answers; connectors are the hub's and still shown.`;
  }
  banner.replaceChildren(title, hint);
}

/** Called by api.js after each call. kind: "hub" or "kafka"; ok: whether that part answered. */
export function report(kind, ok, message) {
  const before = state[kind];
  if (ok) state[kind] = null;
  else if (!before) state[kind] = { since: Date.now(), message: message || "" };
  if (kind === "hub" && !ok) state.kafka = null; // unknown while the hub is away
  if (Boolean(before) !== Boolean(state[kind])) {
    render();
    window.dispatchEvent(new CustomEvent("sluice:connection", { detail: { ...state } }));
  }
}

export function hubDown() {
  return Boolean(state.hub);
}

export function kafkaDown() {
  return Boolean(state.kafka);
}
