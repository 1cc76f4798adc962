"""Secrets in connector configs are shown as ``[hidden]`` in every REST answer, as Kafka
Connect does for its PASSWORD-type keys.

Which keys are secret: the keys a connector's config model declares ``Password`` (listed with
type ``PASSWORD`` by ``GET /connector-plugins/{class}/config``), plus the Kafka client keys
Kafka itself types PASSWORD (``ssl.key.password``, ``sasl.jaas.config`` ...) wherever they
appear under a prefix (``producer.override.``, ``value.converter.`` ...). The stored config
(the config topic) keeps the real values; only what leaves through the API is masked.

Round trips: a client that GETs a config, edits it and PUTs (or PATCHes) it back sends
``[hidden]`` for each secret; ``restore`` puts the stored value back, so the secret survives
the edit. ``[hidden]`` where nothing is stored (a new connector) is refused with 400 naming the
key, rather than stored as the password.

Pipeline configs (``/pipelines``) are nested JSON without declared types: ``mask_nested`` hides
the Kafka client secrets under any key and the password inside every ``url`` (SQLAlchemy URLs
of table outputs), and ``restore_nested`` puts stored values back the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, unquote

from hub.rest.errors import RestError

HIDDEN = "[hidden]"
CLIENT_SECRETS = frozenset(
    {
        "ssl.key.password",
        "ssl.keystore.password",
        "ssl.keystore.key",
        "ssl.truststore.password",
        "sasl.jaas.config",
        "sasl.password",
        "sasl.oauthbearer.client.secret",
        "basic.auth.user.info",
    }
)


def client_secret(key: str) -> bool:
    """``key`` is (or ends with ``.`` +) a Kafka client setting of type PASSWORD."""
    return key in CLIENT_SECRETS or any(key.endswith("." + name) for name in CLIENT_SECRETS)


class SecretKeys:
    """Secret keys per connector class, asked of the herder once per class (thread-safe:
    a dict write of an immutable value)."""

    def __init__(self, herder: Any) -> None:
        self.herder = herder
        self._declared: dict[str, frozenset[str]] = {}

    def of(self, config: Mapping[str, Any], plugin: str | None = None) -> frozenset[str]:
        plugin = plugin or str(config.get("connector.class") or "")
        declared = self._declared.get(plugin)
        if declared is None:
            declared = self._declared[plugin] = self._lookup(plugin)
        return declared | {k for k in config if client_secret(k)}

    def _lookup(self, plugin: str) -> frozenset[str]:
        if not plugin:
            return frozenset()
        try:
            keys = self.herder.plugin_config(plugin)
        except Exception:  # an unknown or broken plugin: only the well-known names apply
            return frozenset()
        return frozenset(k["name"] for k in keys if k.get("type") == "PASSWORD")

    def mask(self, config: Mapping[str, Any], plugin: str | None = None) -> dict[str, Any]:
        return mask(config, self.of(config, plugin))

    def mask_info(self, info: Mapping[str, Any]) -> dict[str, Any]:
        """A ConnectorInfo (``{name, config, tasks, type}``) with its config masked."""
        return {**info, "config": self.mask(info.get("config") or {})}


def mask(config: Mapping[str, Any], secrets: Iterable[str]) -> dict[str, Any]:
    hidden = set(secrets)
    return {
        k: HIDDEN if k in hidden and v is not None and v != "" else v for k, v in config.items()
    }


def restore(
    config: Mapping[str, Any], stored: Mapping[str, Any] | None, secrets: Iterable[str]
) -> dict[str, Any]:
    """``config`` with each ``[hidden]`` secret replaced by its stored value (400 if none)."""
    out = dict(config)
    missing: dict[str, list[str]] = {}
    for key in secrets:
        if out.get(key) != HIDDEN:
            continue
        if stored is not None and key in stored:
            out[key] = stored[key]
        else:
            missing[key] = [f"{HIDDEN} stands for a stored value, and none is stored; send it"]
    if missing:
        raise RestError(400, f"No stored value to keep for {', '.join(sorted(missing))}", missing)
    return out


def mask_nested(value: Any) -> Any:
    """A pipeline config (nested JSON) with Kafka client secrets and URL passwords hidden.

    Pipeline templates have no declared PASSWORD keys; their secrets are the Kafka client
    options under ``kafka`` and the password inside SQLAlchemy ``url`` values.
    """
    if isinstance(value, dict):
        return {k: _mask_entry(str(k), v) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_nested(v) for v in value]
    return value


def _mask_entry(key: str, value: Any) -> Any:
    if client_secret(key) and isinstance(value, str) and value:
        return HIDDEN
    if key == "url" and isinstance(value, str):
        return _with_password(value, HIDDEN)
    return mask_nested(value)


def restore_nested(value: Any, stored: Any, where: str = "config") -> Any:
    """``value`` with each ``[hidden]`` (a whole value or a URL's password) taken from
    ``stored``; 400 naming the place when nothing is stored there."""
    if value == HIDDEN:
        if stored is None or stored == HIDDEN:
            raise RestError(400, f"No stored value to keep for {where}", {where: [_NOTHING]})
        return stored
    if isinstance(value, dict):
        old = stored if isinstance(stored, dict) else {}
        return {k: _restore_entry(str(k), v, old.get(k), f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        old_list = stored if isinstance(stored, list) else []
        return [
            restore_nested(v, old_list[i] if i < len(old_list) else None, f"{where}[{i}]")
            for i, v in enumerate(value)
        ]
    return value


_NOTHING = f"{HIDDEN} stands for a stored value, and none is stored; send it"


def _restore_entry(key: str, value: Any, stored: Any, where: str) -> Any:
    if key == "url" and isinstance(value, str) and _password(value) == HIDDEN:
        kept = _password(stored) if isinstance(stored, str) else None
        if kept is None:
            raise RestError(400, f"No stored password to keep for {where}", {where: [_NOTHING]})
        return _with_password(value, kept)
    return restore_nested(value, stored, where)


def _userinfo(url: str) -> tuple[str, str, str, str | None] | None:
    """(before, user, after, password) around a URL's ``user:password@``; None without one.

    Parsed by hand: ``urlsplit`` rejects the ``[`` of ``[hidden]`` in a netloc."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return None
    authority_end = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority = rest[:authority_end]
    userinfo, at, hostinfo = authority.rpartition("@")
    if not at or ":" not in userinfo:
        return None
    user, _, password = userinfo.partition(":")
    return f"{scheme}://", user, f"@{hostinfo}{rest[authority_end:]}", unquote(password)


def _password(url: str) -> str | None:
    parts = _userinfo(url)
    return parts[3] if parts is not None else None


def _with_password(url: str, password: str) -> str:
    """``url`` with its password replaced (unchanged without one)."""
    parts = _userinfo(url)
    if parts is None:
        return url
    before, user, after, _ = parts
    secret = password if password == HIDDEN else quote(password, safe="")
    return f"{before}{user}:{secret}{after}"
