// Confirmation dialogs (<dialog>, modal, keyboard-friendly): a plain "are you sure", and one
// that asks to type the name of what is about to be deleted before the button works.

import { h } from "./dom.js";

function open(title, body, confirmLabel, danger, typed) {
  return new Promise((resolve) => {
    const input = typed ? h("input", { id: "confirm-name", autocomplete: "off", spellcheck: "false" }) : null;
    const ok = h("button", { type: "submit", class: danger ? "danger" : "primary", disabled: typed ? true : null }, confirmLabel);
    const cancel = h("button", { type: "button" }, "Cancel");
    const form = h(
      "form",
      { method: "dialog" },
      h("h2", {}, title),
      body,
      typed ? [h("label", { for: "confirm-name" }, "Type ", h("code", {}, typed), " to confirm"), input] : null,
      h("div", { class: "actions" }, ok, cancel),
    );
    const dialog = h("dialog", { "aria-label": title }, form);
    let answer = false;
    if (input) input.addEventListener("input", () => { ok.disabled = input.value !== typed; });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (typed && input.value !== typed) return;
      answer = true;
      dialog.close();
    });
    cancel.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(answer);
    });
    document.body.append(dialog);
    dialog.showModal();
    (input || ok).focus();
  });
}

/** Resolves true once the user typed `name` and pressed the button. */
export function confirmByName(title, name, body, confirmLabel = "Delete") {
  return open(title, body, confirmLabel, true, name);
}

/** Resolves true when the user confirms. */
export function confirmAction(title, body, confirmLabel, danger = false) {
  return open(title, body, confirmLabel, danger, null);
}
