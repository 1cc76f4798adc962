"""The generated REST token: created once with mode 0600, reused, found by local CLIs only."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from hub.rest.token_file import (
    TokenFileError,
    ensure_token,
    local_token,
    token_path,
    with_default_token,
)
from hub.runtime.config import WorkerConfig


def test_generated_once_owner_only(tmp_path: Path) -> None:
    token, path, created = ensure_token(tmp_path / "data")
    assert created and path == tmp_path / "data" / "hub.token"
    assert len(token) >= 40 and path.read_text() == token + "\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again, _, created_again = ensure_token(tmp_path / "data")
    assert again == token and not created_again
    assert ensure_token(tmp_path / "other")[0] != token


def test_loose_mode_tightened_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    token, path, _ = ensure_token(tmp_path)
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING):
        assert ensure_token(tmp_path)[0] == token
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "readable by other users" in caplog.text and token not in caplog.text


def test_planted_symlink_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("attacker's token\n")
    token_path(tmp_path / "data").parent.mkdir()
    token_path(tmp_path / "data").symlink_to(target)
    with pytest.raises(TokenFileError, match=r"hub\.token"):
        ensure_token(tmp_path / "data")


def test_worker_config_gets_the_token_unless_it_has_credentials(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = WorkerConfig.from_mapping({"data.dir": str(tmp_path)})
    with caplog.at_level(logging.INFO):
        secured = with_default_token(config)
    token = (tmp_path / "hub.token").read_text().strip()
    assert secured.rest_auth_token == token
    (record,) = [r for r in caplog.records if r.name == "hub.rest.token_file"]
    assert record.token_file == str(tmp_path / "hub.token")  # type: ignore[attr-defined]
    assert token not in caplog.text  # the path, never the token
    own = WorkerConfig.from_mapping({"data.dir": str(tmp_path / "b"), "rest.auth.basic": "u:p"})
    assert with_default_token(own) is own and not (tmp_path / "b").exists()
    opted_out = WorkerConfig.from_mapping(
        {"data.dir": str(tmp_path / "c"), "rest.auth.allow.unauthenticated": "true"}
    )
    assert with_default_token(opted_out).rest_auth_token is None


def test_local_token_only_for_loopback_urls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token, path, _ = ensure_token(tmp_path)
    monkeypatch.setenv("SLUICE_DATA_DIR", str(tmp_path))
    assert local_token("http://127.0.0.1:8083") == token
    assert local_token("http://localhost:9999") == token
    assert local_token("http://hub.example.com:8083") is None  # never sent elsewhere unasked
    assert local_token("http://hub.example.com:8083", str(path)) == token  # explicit file
    monkeypatch.setenv("SLUICE_DATA_DIR", str(tmp_path / "none"))
    monkeypatch.chdir(tmp_path)
    assert local_token("http://127.0.0.1:8083") is None
    os.makedirs(tmp_path / "data")
    (tmp_path / "data" / "hub.token").write_text("from-cwd\n")
    assert local_token("http://127.0.0.1:8083") == "from-cwd"
