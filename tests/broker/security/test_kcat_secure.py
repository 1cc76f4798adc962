"""kcat over SASL_SSL with SCRAM-SHA-512 and over SSL with a client certificate: produce,
consume in a group, and a wrong password that fails with a non-zero exit."""

from __future__ import annotations

import shutil
import subprocess
import uuid

import pytest

from tests.fixtures.broker import api_versions_ok
from tests.fixtures.secure_broker import SecureBroker

KCAT = shutil.which("kcat") or shutil.which("kafkacat") or "kcat"  # ./dev installs it
TIMEOUT = 30


def _kcat(settings: dict[str, str], *args: str, stdin: str | None = None,
          check: bool = True) -> subprocess.CompletedProcess[str]:  # fmt: skip
    options = [f"{k}={v}" for k, v in settings.items() if k != "bootstrap.servers"]
    cmd = [KCAT, "-b", settings["bootstrap.servers"]]
    for option in options:
        cmd += ["-X", option]
    result = subprocess.run([*cmd, *args], input=stdin, capture_output=True, text=True,
                            timeout=TIMEOUT, check=False)  # fmt: skip
    if check:
        assert result.returncode == 0, result.stderr
    return result


@pytest.mark.parametrize("kind", ["scram", "cert"])
def test_kcat_produce_and_group_consume(
    secure_broker: SecureBroker, topic_name: str, kind: str
) -> None:
    settings = secure_broker.client_settings(kind)
    lines = [f"value-{i}" for i in range(20)]
    _kcat(settings, "-P", "-t", topic_name, stdin="\n".join(lines) + "\n")
    group = f"g-{uuid.uuid4().hex[:6]}"
    out = _kcat(settings, "-G", group, "-X", "auto.offset.reset=earliest", "-c", "20", "-q",
                "-f", "%s\n", topic_name).stdout  # fmt: skip
    assert sorted(out.splitlines()) == sorted(lines)


def test_kcat_wrong_password_fails(secure_broker: SecureBroker) -> None:
    settings = secure_broker.client_settings("scram", **{"sasl.password": "wrong"})
    result = _kcat(settings, "-L", "-m", "5", check=False)
    assert result.returncode != 0
    assert "auth" in result.stderr.lower()
    assert api_versions_ok("127.0.0.1", secure_broker.port)
