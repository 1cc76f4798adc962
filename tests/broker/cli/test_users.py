"""``sluice users``: create a SCRAM user through the PLAINTEXT listener, log in with it over
SASL_SSL, describe it (no secrets shown), delete it; and the same admin commands run over
SASL_SSL themselves with ``--command-config`` (a Java-style ``sasl.jaas.config`` file)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from tests.fixtures.secure_broker import SCRAM_PASSWORD, SCRAM_USER, SecureBroker


def _run(*args: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "sluice", *args], capture_output=True, text=True, timeout=60,
        env={**os.environ, **(env or {})}, check=False,
    )  # fmt: skip
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    return result.stdout


def _logs_in(broker: SecureBroker, user: str, password: str) -> bool:
    settings = broker.client_settings(
        "scram", **{"sasl.username": user, "sasl.password": password, "socket.timeout.ms": "3000"}
    )
    try:
        AdminClient(settings).list_topics(timeout=4)
    except KafkaException:
        return False
    return True


def test_create_describe_delete(secure_broker: SecureBroker) -> None:
    plain = secure_broker.bootstrap
    _run("users", "create", "dave", "-b", plain, "--iterations", "4096",
         env={"SLUICE_USER_PASSWORD": "dave-pw"})  # fmt: skip
    assert _logs_in(secure_broker, "dave", "dave-pw")
    described = _run("users", "describe", "dave", "-b", plain)
    assert "SCRAM-SHA-256" in described and "SCRAM-SHA-512" in described and "4096" in described
    assert "dave-pw" not in described
    _run("users", "delete", "dave", "-b", plain)
    assert not _logs_in(secure_broker, "dave", "dave-pw")


def test_admin_commands_over_sasl_ssl_with_command_config(
    secure_broker: SecureBroker, tmp_path: Path, topic_name: str
) -> None:
    config = tmp_path / "client.properties"
    config.write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{SCRAM_USER}" password="{SCRAM_PASSWORD}";\n'
        f"ssl.truststore.type=PEM\nssl.truststore.location={secure_broker.tls.ca}\n"
    )
    sasl = secure_broker.bootstrap_of("SASL_SSL")
    _run("topics", "--command-config", str(config), "create", topic_name, "-b", sasl)
    assert topic_name in _run("topics", "--command-config", str(config), "list", "-b", sasl)
    assert SCRAM_USER in _run("users", "describe", "-b", sasl, "--command-config", str(config))
    produced = subprocess.run(
        [sys.executable, "-m", "sluice", "produce", topic_name, "-b", sasl,
         "--command-config", str(config)],
        input="one\ntwo\n", capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert produced.returncode == 0, produced.stderr
    consumed = _run("consume", topic_name, "-b", sasl, "-n", "2",
                    env={"SLUICE_COMMAND_CONFIG": str(config)})  # fmt: skip
    assert consumed.splitlines() == ["one", "two"]
