"""What the schema-registry converters share: config keys, the wire format, subjects, caches.

Wire format (Confluent's): byte 0 = magic 0, bytes 1-4 = the schema id (big-endian int32),
then the payload (Protobuf inserts its message indexes first). A record whose value is None
stays a tombstone.

Config keys, as Confluent's converters take them (prefixed ``value.converter.`` etc.):
``schema.registry.url`` (required, comma-separated list allowed), ``basic.auth.credentials.
source`` (URL, USER_INFO) with ``basic.auth.user.info`` (user:password; or credentials in the
URL), ``bearer.auth.credentials.source`` (STATIC_TOKEN) with ``bearer.auth.token``,
``auto.register.schemas`` (default true), ``use.latest.version`` (default false),
``key.subject.name.strategy``/``value.subject.name.strategy`` (TopicNameStrategy,
RecordNameStrategy, TopicRecordNameStrategy, short or Java class names). Known Confluent keys
whose non-default behaviour Sluice does not have are rejected by name, never ignored.

Caches (no registry call per record): writing keeps, per Connect ``Schema`` object, the wire
prefix and the compiled encoder; reading keeps, per schema id, the Connect schema (the same
object every time, which downstream caches key on) and the compiled decoder. A registry that
does not answer is a ``RetriableError`` (the worker retries per ``errors.retry.timeout``); a
registry refusal (incompatible, unknown subject, bad schema) is a ``DataError``.
"""

from __future__ import annotations

import threading
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from hub.api import ConfigError, ConfigModel, Converter, DataError, RetriableError
from schema_registry.client import RegistryClient, RegistryClientError

MAGIC = 0
_STRATEGY_PACKAGE = "io.confluent.kafka.serializers.subject."
STRATEGIES = ("TopicNameStrategy", "RecordNameStrategy", "TopicRecordNameStrategy")
# Confluent serde keys with behaviour Sluice does not implement: accepted only at their default.
_UNSUPPORTED_DEFAULTS: dict[str, object] = {
    "normalize.schemas": False,
    "use.schema.id": -1,
    "latest.compatibility.strict": True,
    "use.latest.with.metadata": None,
    "schema.reflection": False,
    "context.name.strategy": None,
    "proxy.host": None,
    "proxy.port": None,
}


class RegistryConverterConfig(ConfigModel):
    schema_registry_url: str = Field(
        alias="schema.registry.url", description="Schema registry URL(s), comma-separated."
    )
    basic_auth_credentials_source: Literal["URL", "USER_INFO", "SASL_INHERIT"] = Field(
        "URL", alias="basic.auth.credentials.source",
        description="Where basic-auth credentials come from (USER_INFO: basic.auth.user.info).",
    )  # fmt: skip
    basic_auth_user_info: SecretStr | None = Field(
        None, alias="basic.auth.user.info", description="user:password for the registry."
    )
    bearer_auth_credentials_source: Literal["STATIC_TOKEN"] | None = Field(
        None, alias="bearer.auth.credentials.source", description="STATIC_TOKEN to send a token."
    )
    bearer_auth_token: SecretStr | None = Field(
        None, alias="bearer.auth.token", description="Bearer token for the registry."
    )
    auto_register_schemas: bool = Field(
        True, alias="auto.register.schemas", description="Register new schemas when writing."
    )
    use_latest_version: bool = Field(
        False, alias="use.latest.version",
        description="Write with the subject's latest registered schema instead of the record's.",
    )  # fmt: skip
    key_subject_name_strategy: str = Field(
        "TopicNameStrategy", alias="key.subject.name.strategy", description="Subject of keys."
    )
    value_subject_name_strategy: str = Field(
        "TopicNameStrategy", alias="value.subject.name.strategy", description="Subject of values."
    )

    @field_validator("key_subject_name_strategy", "value_subject_name_strategy")
    @classmethod
    def _known_strategy(cls, value: str) -> str:
        short = value.strip().removeprefix(_STRATEGY_PACKAGE)
        if short not in STRATEGIES:
            raise ValueError(
                f"unknown subject name strategy {value!r}; use {', '.join(STRATEGIES)}"
            )
        return short

    @model_validator(mode="after")
    def _no_unsupported(self) -> RegistryConverterConfig:
        extra = self.model_extra or {}
        bad = {}
        for key, default in _UNSUPPORTED_DEFAULTS.items():
            if key in extra and str(extra[key]).lower() != str(default).lower():
                bad[key] = f"{key}={extra[key]} is not supported by Sluice's converters"
        if self.basic_auth_credentials_source == "SASL_INHERIT":
            bad["basic.auth.credentials.source"] = "SASL_INHERIT is not supported; use USER_INFO"
        if bad:
            raise ValueError("; ".join(bad.values()))
        return self


def subject_name(strategy: str, topic: str, is_key: bool, record_name: str | None) -> str:
    if strategy == "TopicNameStrategy":
        return f"{topic}-{'key' if is_key else 'value'}"
    if not record_name:
        raise DataError(f"{strategy} needs a named record/message schema; this one has no name")
    if strategy == "RecordNameStrategy":
        return record_name
    return f"{topic}-{record_name}"


def make_client(config: RegistryConverterConfig) -> RegistryClient:
    basic = token = None
    url = config.schema_registry_url
    if config.bearer_auth_credentials_source == "STATIC_TOKEN":
        if config.bearer_auth_token is None:
            raise ConfigError("bearer token missing", {"bearer.auth.token": ["required"]})
        token = config.bearer_auth_token.get_secret_value()
    elif config.basic_auth_credentials_source == "USER_INFO" and config.basic_auth_user_info:
        basic = config.basic_auth_user_info.get_secret_value()
    else:  # URL: credentials inside the URL (http://user:pass@host:8081)
        first = urllib.parse.urlsplit(url.split(",")[0].strip())
        if first.username is not None:
            user = urllib.parse.unquote(first.username)
            basic = f"{user}:{urllib.parse.unquote(first.password or '')}"
            url = ",".join(_strip_userinfo(u) for u in url.split(","))
    return RegistryClient(url, basic=basic, token=token)


def _strip_userinfo(url: str) -> str:
    parts = urllib.parse.urlsplit(url.strip())
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def registry_call(what: str, call: Callable[[], Any]) -> Any:
    """Runs a registry request, mapping failures to the runtime's error kinds."""
    try:
        return call()
    except RegistryClientError as exc:
        if exc.status == 0 or exc.status >= 500:
            raise RetriableError(
                f"schema registry unavailable while {what}: {exc.message}"
            ) from None
        raise DataError(f"schema registry refused {what}: {exc}") from None


def frame(data: bytes) -> tuple[int, memoryview]:
    """(schema id, payload) of a Confluent-framed message; DataError on anything else."""
    if len(data) < 5 or data[0] != MAGIC:
        raise DataError(
            "Unknown magic byte: the message was not written with a schema-registry serializer "
            f"(first bytes {bytes(data[:5])!r})"
        )
    return int.from_bytes(data[1:5], "big"), memoryview(data)[5:]


def prefix(schema_id: int) -> bytes:
    return bytes([MAGIC]) + schema_id.to_bytes(4, "big")


class WriterCache:
    """Per Connect-schema object: the thing ``build`` made for it (bounded, thread-safe)."""

    size: ClassVar[int] = 1000

    def __init__(self) -> None:
        self._entries: dict[int, tuple[Any, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key_obj: Any, build: Callable[[], Any]) -> Any:
        hit = self._entries.get(id(key_obj))
        if hit is not None and hit[0] is key_obj:
            return hit[1]
        value = build()
        with self._lock:
            if len(self._entries) >= self.size:
                self._entries.clear()
            self._entries[id(key_obj)] = (key_obj, value)  # holds the object: its id stays valid
        return value


class RegistryConverter(Converter):
    """What the Avro, Protobuf and JSON Schema converters set up alike: the registry client,
    the subject name strategy of their side (key or value) and the per-schema writer cache."""

    config: RegistryConverterConfig

    def __init__(self, config: Mapping[str, Any], is_key: bool) -> None:
        super().__init__(config, is_key)
        self.client = make_client(self.config)
        self.strategy = (
            self.config.key_subject_name_strategy if is_key
            else self.config.value_subject_name_strategy
        )  # fmt: skip
        self._writers = WriterCache()
