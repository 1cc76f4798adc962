"""``sluice broker``'s configuration: defaults < server.properties < ``--override`` < flags.

The command itself is the application's (``sluice.commands``: it hands the config to the
composition root, ``sluice.node``); this module maps what a user gives to a ``BrokerConfig``,
in the broker layer, next to the properties it reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def build_config(
    config_file: Path | None, overrides: list[str], flags: Mapping[str, object]
) -> object:
    """Defaults < properties file < ``--override`` < flags; raises ValueError naming a bad key."""
    from broker.config import BrokerConfig
    from broker.properties import PropertiesError, read_properties, to_config_fields

    props: dict[str, str] = read_properties(config_file) if config_file is not None else {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise PropertiesError(f"--override needs KEY=VALUE, got {item!r}")
        props[key.strip()] = value.strip()
    fields = to_config_fields(props)
    fields.update({k: v for k, v in flags.items() if v is not None})
    return BrokerConfig(**fields)
