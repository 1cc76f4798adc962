"""Client security settings: the Java client's forms become librdkafka's and kafka-python's,
what cannot be honoured is refused by name, and secrets never show."""

from __future__ import annotations

import pytest

from sluice.client_security import (
    ClientSecurityError,
    redact,
    to_kafka_python,
    to_librdkafka,
)
from spark_pipelines.datasource._options import Options
from spark_pipelines.errors import OptionError

JAAS = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required "
    'username="alice" password="p\\"w";'
)


def test_java_forms_become_librdkafka() -> None:
    out = to_librdkafka({
        "bootstrap.servers": "b:9093", "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": JAAS,
        "ssl.truststore.type": "PEM", "ssl.truststore.location": "/ca.pem",
        "ssl.keystore.type": "PEM", "ssl.keystore.location": "/client.pem",
        "ssl.endpoint.identification.algorithm": "",
    })  # fmt: skip
    assert out == {
        "bootstrap.servers": "b:9093", "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice", "sasl.password": 'p"w',
        "ssl.ca.location": "/ca.pem", "ssl.certificate.location": "/client.pem",
        "ssl.key.location": "/client.pem", "ssl.endpoint.identification.algorithm": "none",
    }  # fmt: skip


def test_kafka_python_arguments() -> None:
    kwargs = to_kafka_python({
        "security.protocol": "sasl_ssl", "sasl.mechanism": "PLAIN",
        "sasl.username": "bob", "sasl.password": "pw", "ssl.ca.location": "/ca.pem",
    })  # fmt: skip
    assert kwargs == {
        "security_protocol": "SASL_SSL", "sasl_mechanism": "PLAIN",
        "sasl_plain_username": "bob", "sasl_plain_password": "pw", "ssl_cafile": "/ca.pem",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("settings", "key"),
    [
        ({"ssl.keystore.type": "JKS", "ssl.keystore.location": "/k.jks"}, "ssl.keystore.type"),
        ({"ssl.truststore.password": "x", "ssl.truststore.location": "/t"}, "ssl.truststore"),
        ({"sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required;"},
         "sasl.jaas.config"),
    ],
)  # fmt: skip
def test_unusable_forms_are_refused_by_name(settings: dict[str, str], key: str) -> None:
    with pytest.raises(ClientSecurityError, match=key.replace(".", r"\.")):
        to_librdkafka(settings)


def test_secrets_are_redacted() -> None:
    shown = redact({"sasl.password": "pw", "sasl.jaas.config": JAAS, "sasl.username": "alice",
                    "ssl.key.password": "k"})  # fmt: skip
    assert shown == {"sasl.password": "[hidden]", "sasl.jaas.config": "[hidden]",
                     "sasl.username": "alice", "ssl.key.password": "[hidden]"}  # fmt: skip


def test_spark_source_options_take_java_forms() -> None:
    options = Options({"kafka.bootstrap.servers": "b:9093", "kafka.sasl.jaas.config": JAAS})
    assert options.kafka_config()["sasl.username"] == "alice"
    with pytest.raises(OptionError, match=r"ssl\.keystore\.type"):
        Options(
            {"kafka.bootstrap.servers": "b", "kafka.ssl.keystore.type": "PKCS12"}
        ).kafka_config()
