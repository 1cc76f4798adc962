"""Kafka's ``sasl.jaas.config`` text: ``<LoginModule class> <flag> key="value" ...;``.

The broker reads the PLAIN login module's ``user_<name>="<password>"`` options as its PLAIN
users (Kafka's ``PlainLoginModule`` server side); clients write ``username``/``password``.
Values are double-quoted with backslash escapes, or bare tokens; the trailing ``;`` ends the
entry. Only one entry is accepted: two login modules in one value are a mistake in Kafka too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from broker.errors import JaasError as JaasError

_OPTION = re.compile(r'\s*([A-Za-z0-9_.\-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))')
_FLAGS = ("required", "requisite", "sufficient", "optional")


@dataclass(frozen=True)
class JaasEntry:
    login_module: str
    options: dict[str, str]

    def users(self) -> dict[str, str]:
        """``user_alice="pw"`` options -> {"alice": "pw"} (the broker's PLAIN users)."""
        return {k[5:]: v for k, v in self.options.items() if k.startswith("user_") and k[5:]}


def parse_jaas(text: str) -> JaasEntry:
    """Parses one entry; raises JaasError saying what is wrong (never echoing secrets)."""
    body = text.strip()
    if not body.endswith(";"):
        raise JaasError("sasl.jaas.config must end with ';'")
    body = body[:-1]
    parts = body.split(None, 2)
    if len(parts) < 2 or parts[1].lower() not in _FLAGS:
        raise JaasError(
            "sasl.jaas.config must start with a login module class and a flag "
            "(e.g. org.apache.kafka.common.security.plain.PlainLoginModule required)"
        )
    rest = parts[2] if len(parts) == 3 else ""
    options: dict[str, str] = {}
    pos = 0
    while pos < len(rest):
        if rest[pos:].strip() == "":
            break
        match = _OPTION.match(rest, pos)
        if match is None:
            raise JaasError(f"sasl.jaas.config: cannot read the options after {rest[:pos]!r}"[:120])
        key, quoted, bare = match.groups()
        options[key] = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else bare
        pos = match.end()
    return JaasEntry(parts[0], options)
