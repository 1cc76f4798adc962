"""``sluice schemas`` against a running registry."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import typer
from typer.testing import CliRunner

from schema_registry.cli import register_commands

app = typer.Typer()
register_commands(app)


@app.command()
def _noop() -> None:  # a second command keeps typer from collapsing the app into one
    pass


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_register_list_get_check_config(registry_url: str, tmp_path: Path) -> None:
    subject = f"cli-{uuid.uuid4().hex[:6]}-value"
    v1 = tmp_path / "order.avsc"
    v1.write_text(json.dumps({"type": "record", "name": "Order", "fields": [
        {"name": "id", "type": "long"}]}))  # fmt: skip
    code, output = run("schemas", "register", subject, str(v1), "--url", registry_url)
    assert code == 0 and "id" in output, output
    code, output = run("schemas", "list", "--url", registry_url)
    assert code == 0 and subject in output
    code, output = run("schemas", "get", subject, "--url", registry_url)
    assert code == 0 and '"Order"' in output
    breaking = tmp_path / "breaking.avsc"
    breaking.write_text(json.dumps({"type": "record", "name": "Order", "fields": [
        {"name": "id", "type": "string"}]}))  # fmt: skip
    code, output = run("schemas", "check", subject, str(breaking), "--url", registry_url)
    assert code == 1 and "incompatible" in output and "TYPE_MISMATCH" in output
    code, output = run("schemas", "config", subject, "--set", "none", "--url", registry_url)
    assert code == 0 and "NONE" in output
    code, output = run("schemas", "check", subject, str(breaking), "--url", registry_url)
    assert code == 0 and "compatible" in output
    proto = tmp_path / "m.proto"
    proto.write_text('syntax = "proto3"; message M { int32 n = 1; }')
    code, output = run("schemas", "register", f"{subject}-pb", str(proto), "--url", registry_url)
    assert code == 0, output


def test_errors_are_one_line_with_a_hint(registry_url: str) -> None:
    code, output = run("schemas", "versions", "no-such-subject", "--url", registry_url)
    assert code == 1 and "40401" in output
    code, output = run("schemas", "list", "--url", "http://127.0.0.1:9")
    assert code == 1 and "sluice up" in output
