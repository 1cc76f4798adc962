"""Config providers (KIP-297): secrets stay out of connector configs until a task starts.

A connector config may say ``${file:/run/secrets/pg.properties:password}``,
``${dir:/run/secrets:pg-password}`` or ``${env:PG_PASSWORD}``. The config topic, REST answers
and logs keep that placeholder; the worker resolves it when it starts the connector or a task,
and hands only the resolved copy to the plugin. Task configs a connector generates from its
resolved config are turned back into placeholders before they are stored (Kafka's
``reverseTransform``), so a secret the connector copies into its task configs does not reach
the config topic either.

Worker settings are Kafka's::

    config.providers=file,env,dir
    config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
    config.providers.file.param.allowed.paths=/run/secrets
    config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
    config.providers.env.param.allowlist.pattern=PG_.*
    config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider

The three providers Kafka ships are built in under their Java class names; another class name,
an unknown ``param.``, or a placeholder naming a provider that is not configured is refused by
name. A placeholder whose value cannot be found fails the connector or task start (Kafka
leaves such a placeholder in place; here a password silently being ``${file:...}`` would only
surface later as a confusing login failure).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from hub.api.errors import ConfigError

PLACEHOLDER = re.compile(r"\$\{([^}]*?):(?:([^}]*?):)?([^}]*?)\}")
"""Kafka's ``ConfigTransformer`` pattern: ``${provider:[path:]key}``."""

_CLASS_PREFIX = "org.apache.kafka.common.config.provider."


class ConfigProvider(Protocol):
    """Looks up ``keys`` under ``path`` (a file, a directory, or nothing for env)."""

    def get(self, path: str, keys: set[str]) -> dict[str, str]: ...


def _allowed(params: Mapping[str, str]) -> list[Path] | None:
    raw = params.get("allowed.paths")
    if raw is None:
        return None
    return [Path(p.strip()).resolve() for p in raw.split(",") if p.strip()]


def _check_path(path: str, allowed: list[Path] | None, what: str) -> Path:
    resolved = Path(path).resolve()
    if allowed is not None and not any(resolved.is_relative_to(root) for root in allowed):
        raise ConfigError(f"{what} {path} is outside the provider's allowed.paths")
    return resolved


@dataclass
class FileConfigProvider:
    """``${file:PATH:KEY}``: KEY of the Java properties file at PATH."""

    allowed: list[Path] | None = None

    def get(self, path: str, keys: set[str]) -> dict[str, str]:
        from hub.runtime.config import parse_properties

        file = _check_path(path, self.allowed, "file")
        try:
            values = parse_properties(file.read_text())
        except OSError as exc:
            raise ConfigError(f"config provider file: cannot read {path}: {exc.strerror}") from None
        return {k: values[k] for k in keys if k in values}


@dataclass
class DirectoryConfigProvider:
    """``${dir:DIR:NAME}``: the content of the file NAME in DIR (Docker/Kubernetes secrets)."""

    allowed: list[Path] | None = None

    def get(self, path: str, keys: set[str]) -> dict[str, str]:
        directory = _check_path(path, self.allowed, "directory")
        out = {}
        for key in keys:
            file = directory / key
            if file.parent != directory:  # a key may not walk out of the directory
                continue
            try:
                out[key] = file.read_text()
            except OSError:
                continue
        return out


@dataclass
class EnvVarConfigProvider:
    """``${env:NAME}``: the worker's environment variable NAME (``allowlist.pattern`` limits
    which ones a connector config may read)."""

    allowlist: re.Pattern[str] | None = None

    def get(self, path: str, keys: set[str]) -> dict[str, str]:
        if path:
            raise ConfigError("config provider env takes no path: write ${env:NAME}")
        return {
            k: os.environ[k]
            for k in keys
            if k in os.environ and (self.allowlist is None or self.allowlist.fullmatch(k))
        }


_PARAMS = {
    "FileConfigProvider": {"allowed.paths"},
    "DirectoryConfigProvider": {"allowed.paths"},
    "EnvVarConfigProvider": {"allowlist.pattern"},
}


def _provider(name: str, class_name: str, params: Mapping[str, str]) -> ConfigProvider:
    short = class_name.removeprefix(_CLASS_PREFIX)
    if short not in _PARAMS:
        raise ConfigError(
            f"config.providers.{name}.class: {class_name!r} is not supported; use "
            + ", ".join(_CLASS_PREFIX + c for c in sorted(_PARAMS))
        )
    unknown = sorted(set(params) - _PARAMS[short])
    if unknown:
        raise ConfigError(
            f"config.providers.{name}: unknown param(s) {', '.join(unknown)} for {short}"
        )
    if short == "FileConfigProvider":
        return FileConfigProvider(_allowed(params))
    if short == "DirectoryConfigProvider":
        return DirectoryConfigProvider(_allowed(params))
    pattern = params.get("allowlist.pattern")
    return EnvVarConfigProvider(re.compile(pattern) if pattern is not None else None)


class ConfigTransformer:
    """Resolves placeholders with the worker's providers; thread-safe (no shared state)."""

    def __init__(self, providers: Mapping[str, ConfigProvider]) -> None:
        self.providers = dict(providers)

    @classmethod
    def from_worker(cls, raw: Mapping[str, object]) -> ConfigTransformer:
        """From the worker's settings (``config.providers`` and its family); ConfigError names
        a bad key."""
        names = [n.strip() for n in str(raw.get("config.providers", "")).split(",") if n.strip()]
        providers: dict[str, ConfigProvider] = {}
        for name in names:
            prefix = f"config.providers.{name}."
            class_name = raw.get(prefix + "class")
            if class_name is None:
                raise ConfigError(f"config.providers names {name} but {prefix}class is not set")
            params = {
                key[len(prefix + "param.") :]: str(value)
                for key, value in raw.items()
                if key.startswith(prefix + "param.")
            }
            providers[name] = _provider(name, str(class_name), params)
        for key in raw:
            if key.startswith("config.providers.") and key.split(".")[2] not in providers:
                raise ConfigError(f"{key}: provider {key.split('.')[2]} is not in config.providers")
        return cls(providers)

    @staticmethod
    def has_placeholders(config: Mapping[str, str]) -> bool:
        return any(PLACEHOLDER.search(str(v)) for v in config.values())

    def transform(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of ``config`` with every placeholder resolved (ConfigError if one cannot be)."""
        wanted: dict[tuple[str, str], set[str]] = {}
        for value in config.values():
            if not isinstance(value, str):
                continue
            for provider, path, key in PLACEHOLDER.findall(value):
                if provider not in self.providers:
                    raise ConfigError(
                        f"config provider {provider!r} is not configured on this worker "
                        "(worker setting config.providers)"
                    )
                wanted.setdefault((provider, path), set()).add(key)
        if not wanted:
            return dict(config)
        found: dict[tuple[str, str, str], str] = {}
        for (provider, path), keys in wanted.items():
            values = self.providers[provider].get(path, keys)
            for key in keys:
                if key not in values:
                    where = f" in {path}" if path else ""
                    raise ConfigError(f"config provider {provider}: no value for {key}{where}")
                found[(provider, path, key)] = values[key]

        def resolve(match: re.Match[str]) -> str:
            return found[(match.group(1), match.group(2) or "", match.group(3))]

        return {
            k: PLACEHOLDER.sub(resolve, v) if isinstance(v, str) else v for k, v in config.items()
        }


def reverse_transform(
    task_config: Mapping[str, object], raw: Mapping[str, str], resolved: Mapping[str, str]
) -> dict[str, object]:
    """Puts the placeholders back into a task config generated from a resolved connector
    config: a key whose raw connector value holds a placeholder and whose task value equals
    the resolved one gets the raw value back (Kafka's ``AbstractHerder.reverseTransform``)."""
    out = dict(task_config)
    for key, value in task_config.items():
        original = raw.get(key)
        if original is not None and PLACEHOLDER.search(original) and value == resolved.get(key):
            out[key] = original
    return out
