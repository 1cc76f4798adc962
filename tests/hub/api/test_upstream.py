"""``UpstreamKeys``: the five classes of keys, through ``ConfigModel.parse``."""

from __future__ import annotations

import logging

import pytest
from pydantic import Field

from hub.api import KAFKA_CONNECT, ConfigError, ConfigModel, UpstreamKeys

SYSTEM = UpstreamKeys(
    system="Acme sink",
    known=frozenset({"acme.url", "acme.mode", "acme.buffer", "acme.magic"}),
    known_patterns=(r"acme\.extra\..+",),
    implemented_patterns=(r"acme\.dyn\.\d+",),
    ignored={"acme.buffer": "a JVM buffer"},
    equivalent={"acme.mode": ("fast",)},
    doc="docs/acme.md",
)


class AcmeConfig(ConfigModel):
    upstream_keys = SYSTEM | KAFKA_CONNECT
    url: str = Field(alias="acme.url")


def test_each_class_of_key(caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(ConfigError) as info:
        AcmeConfig.parse({"acme.url": "u", "acme.magic": "1", "acme.extra.x": "1",
                          "acme.mode": "slow", "connector.plugin.version": "1"})  # fmt: skip
    errors = info.value.errors
    assert set(errors) == {"acme.magic", "acme.extra.x", "acme.mode", "connector.plugin.version"}
    assert errors["acme.magic"] == [
        "acme.magic is a Acme sink setting that Sluice does not support; remove it "
        "(see docs/acme.md)"
    ]
    assert "acme.mode=fast" in errors["acme.mode"][0]
    with caplog.at_level(logging.WARNING, logger="hub.api.upstream"):
        config = AcmeConfig.parse({
            "acme.url": "u", "acme.mode": " FAST ", "acme.buffer": "9", "acme.dyn.3": "x",
            "mine.custom": "kept", "transforms.t.type": "x", "name": "c",
            "value.converter.schemas.enable": "false", "config.action.reload": "none",
        })  # fmt: skip
    assert config.url == "u" and config.raw()["mine.custom"] == "kept"
    assert "acme.buffer" in caplog.text and "a JVM buffer" in caplog.text


def test_field_errors_and_upstream_errors_come_together() -> None:
    with pytest.raises(ConfigError) as info:
        AcmeConfig.parse({"acme.magic": "1"})
    assert set(info.value.errors) == {"acme.url", "acme.magic"}


def test_unsupported_keys_lists_what_the_docs_must_name() -> None:
    assert SYSTEM.unsupported_keys(["acme.url"]) == ["acme.magic"]
    assert "connector.plugin.version" in KAFKA_CONNECT.unsupported_keys()
    assert "exactly.once.support" not in KAFKA_CONNECT.unsupported_keys()  # KIP-618, built
    assert "errors.tolerance" not in KAFKA_CONNECT.unsupported_keys()
