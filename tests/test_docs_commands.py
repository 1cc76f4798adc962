"""The docs describe commands that exist: every ``sluice ...`` in README.md and docs/ names a
real command, and every option it shows is one of that command's options."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from sluice.cli import build

ROOT = Path(__file__).resolve().parents[1]
# `sluice ...` in inline code, or a line of a code block starting with it (shell prompt allowed)
MENTION = re.compile(r"`([^`\n]*\bsluice [^`\n]*)`|^\s*(?:\$ )?(sluice [^\n#|&;]*)", re.M)


def _mentions() -> list[tuple[str, str]]:
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for match in MENTION.finditer(path.read_text()):
            text = (match.group(1) or match.group(2)).strip()
            found.append((str(path.relative_to(ROOT)), text[text.find("sluice ") :]))
    return found


def _options(command: Any) -> set[str]:
    names: set[str] = set()
    for param in command.params:
        names |= set(getattr(param, "opts", ())) | set(getattr(param, "secondary_opts", ()))
    return names


def test_documented_commands_and_options_exist() -> None:
    root = build()
    mentions = _mentions()
    assert len(mentions) > 50  # the scan found the docs' commands
    wrong = []
    for where, text in mentions:
        try:
            tokens = shlex.split(text)
        except ValueError:  # an unbalanced quote in prose: split on spaces
            tokens = text.split()
        command, path, alternatives = root, ["sluice"], False
        for token in tokens[1:]:
            subs = getattr(command, "commands", {})
            if "|" in token and not token.startswith("-"):  # `sluice topics|groups`
                missing = [t for t in token.split("|") if t not in subs]
                if missing:
                    wrong.append(f"{where}: `{text}`: no command {' '.join(path)} {missing[0]}")
                alternatives = True
                break
            if token not in subs:
                break
            command, path = subs[token], [*path, token]
        next_token = tokens[len(path)] if len(tokens) > len(path) else "--help"
        if alternatives:
            continue
        if command is root and not (next_token.startswith("-") or next_token.isupper()):
            wrong.append(f"{where}: `{text}`: no such command")
            continue
        known = _options(command) | {"--help"}
        for token in tokens[len(path) :]:
            option = token.split("=")[0]
            if "|" in option:  # alternatives in prose: `--reset | --set`
                continue
            if option.startswith("-") and option != "-" and option not in known:
                wrong.append(f"{where}: `{text}`: {' '.join(path)} has no option {option}")
    assert wrong == [], "\n".join(wrong)
