"""Listener settings: which listeners may bind beyond loopback, and every security setting a
broker cannot honour refused by name before anything starts."""

from __future__ import annotations

import pytest

from broker.config import BrokerConfig
from broker.listen_policy import InsecureListenerError, check_listeners
from broker.properties import PropertiesError, to_config_fields
from broker.security import listener_security
from broker.security.listeners import ListenerError, parse_listeners
from broker.security.tls import TlsConfigError
from tests.fixtures.tls import TlsFiles


def _config(listeners: str, **security: str) -> BrokerConfig:
    fields = to_config_fields({"listeners": listeners, **security})
    return BrokerConfig(**fields)


def test_authenticated_listeners_may_bind_beyond_loopback() -> None:
    sasl = _config("PLAINTEXT://127.0.0.1:9092,SASL_SSL://0.0.0.0:9093")
    assert check_listeners(sasl) == []
    mtls = _config("SSL://0.0.0.0:9093", **{"ssl.client.auth": "required"})
    assert check_listeners(mtls) == []
    for open_one in ("PLAINTEXT://0.0.0.0:9092", "SSL://0.0.0.0:9093"):
        with pytest.raises(InsecureListenerError, match=r"0\.0\.0\.0"):
            check_listeners(_config(open_one))
    assert check_listeners(_config("PLAINTEXT://0.0.0.0:9092"), allow_insecure_network=True) == [
        "0.0.0.0"
    ]


def test_flags_move_the_first_listener() -> None:
    fields = to_config_fields({"listeners": "SASL_SSL://127.0.0.1:9093,PLAINTEXT://127.0.0.1:9092"})
    config = BrokerConfig(**{**fields, "port": 0})
    first = config.effective_listeners()[0]
    assert (first.name, first.port) == ("SASL_SSL", 0)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({}, "sasl.enabled.mechanisms"),
        ({"sasl.enabled.mechanisms": "GSSAPI"}, "GSSAPI"),
        ({"sasl.enabled.mechanisms": "PLAIN"}, "plain.sasl.jaas.config"),
    ],
)
def test_sasl_settings_are_checked(settings: dict[str, str], message: str) -> None:
    listener = parse_listeners("SASL_PLAINTEXT://127.0.0.1:0")[0]
    with pytest.raises(ListenerError, match=message):
        listener_security.build(listener, settings, None)


def test_tls_settings_are_checked(tls_files: TlsFiles) -> None:
    listener = parse_listeners("SSL://127.0.0.1:0")[0]
    with pytest.raises(TlsConfigError, match=r"needs ssl\.keystore\.location"):
        listener_security.build(listener, {}, None)
    with pytest.raises(TlsConfigError, match="JKS"):
        listener_security.build(listener, {"ssl.keystore.type": "JKS"}, None)
    with pytest.raises(TlsConfigError, match="truststore"):
        listener_security.build(listener, {
            "ssl.keystore.location": str(tls_files.server_keystore),
            "ssl.client.auth": "required",
        }, None)  # fmt: skip


def test_unknown_security_keys_are_refused_by_name() -> None:
    with pytest.raises(PropertiesError, match=r"ssl\.cipher\.suites"):
        to_config_fields({"ssl.cipher.suites": "x"})
    with pytest.raises(PropertiesError, match="names no listener"):
        to_config_fields({"listener.name.nope.ssl.client.auth": "required"})
