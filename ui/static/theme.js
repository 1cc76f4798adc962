// Light or dark: follows the system (prefers-color-scheme) until the user picks one with the
// toggle in the top bar; the choice is kept in localStorage and set as <html data-theme>.

const KEY = "sluice-theme";
const MODES = ["system", "light", "dark"];
const LABEL = { system: "Theme: system", light: "Theme: light", dark: "Theme: dark" };

function stored() {
  try {
    const mode = localStorage.getItem(KEY);
    return MODES.includes(mode) ? mode : "system";
  } catch {
    return "system";
  }
}

function apply(mode) {
  if (mode === "system") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = mode;
  const button = document.getElementById("theme");
  if (button) {
    button.textContent = LABEL[mode];
    button.title = "Switch between the system's colours, light and dark";
  }
}

export function initTheme() {
  apply(stored());
  document.getElementById("theme")?.addEventListener("click", () => {
    const next = MODES[(MODES.indexOf(stored()) + 1) % MODES.length];
    try {
      localStorage.setItem(KEY, next);
    } catch {
      /* private mode: the choice lasts for this page only */
    }
    apply(next);
  });
}
