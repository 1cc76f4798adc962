"""Config providers (KIP-297): placeholders, the three built-in providers, reverse transform."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.api.errors import ConfigError
from hub.runtime.config import WorkerConfig
from hub.runtime.config_providers import ConfigTransformer, reverse_transform
from hub.runtime.errors import WorkerConfigError

P = "org.apache.kafka.common.config.provider."


def transformer(tmp_path: Path, **extra: str) -> ConfigTransformer:
    return ConfigTransformer.from_worker({
        "config.providers": "file,env,dir",
        "config.providers.file.class": P + "FileConfigProvider",
        "config.providers.file.param.allowed.paths": str(tmp_path),
        "config.providers.env.class": P + "EnvVarConfigProvider",
        "config.providers.env.param.allowlist.pattern": "SLUICE_T_.*",
        "config.providers.dir.class": P + "DirectoryConfigProvider",
        **extra,
    })  # fmt: skip


def test_each_provider_resolves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pg.properties").write_text("user=app\npassword=s3cret\n")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "token").write_text("tok-1")
    monkeypatch.setenv("SLUICE_T_KEY", "k-1")
    t = transformer(tmp_path)
    config = {
        "connection.password": f"${{file:{tmp_path}/pg.properties:password}}",
        "url": f"postgres://${{file:{tmp_path}/pg.properties:user}}@db/x",
        "token": f"${{dir:{tmp_path}/secrets:token}}",
        "key": "${env:SLUICE_T_KEY}",
        "plain": "no placeholders",
    }
    assert t.transform(config) == {
        "connection.password": "s3cret", "url": "postgres://app@db/x", "token": "tok-1",
        "key": "k-1", "plain": "no placeholders",
    }  # fmt: skip
    assert t.transform({"n": 3}) == {"n": 3}  # non-strings pass through


def test_refusals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = transformer(tmp_path)
    (tmp_path / "a.properties").write_text("x=1\n")
    with pytest.raises(ConfigError, match="not configured"):
        t.transform({"k": "${vault:secret/x:y}"})
    with pytest.raises(ConfigError, match="no value for missing"):
        t.transform({"k": f"${{file:{tmp_path}/a.properties:missing}}"})
    with pytest.raises(ConfigError, match=r"allowed\.paths"):
        t.transform({"k": "${file:/etc/passwd:root}"})
    monkeypatch.setenv("HOME_SECRET", "x")
    with pytest.raises(ConfigError, match="no value for HOME_SECRET"):
        t.transform({"k": "${env:HOME_SECRET}"})  # outside allowlist.pattern
    (tmp_path / "d").mkdir()
    with pytest.raises(ConfigError, match="no value"):
        t.transform({"k": f"${{dir:{tmp_path}/d:../a.properties}}"})


def test_worker_config_refuses_bad_provider_settings() -> None:
    with pytest.raises(WorkerConfigError, match="not supported"):
        WorkerConfig.from_mapping({"config.providers": "v",
                                   "config.providers.v.class": "com.example.Vault"})  # fmt: skip
    with pytest.raises(WorkerConfigError, match="unknown param"):
        WorkerConfig.from_mapping({
            "config.providers": "file", "config.providers.file.class": P + "FileConfigProvider",
            "config.providers.file.param.nope": "1",
        })  # fmt: skip
    with pytest.raises(WorkerConfigError, match="class is not set"):
        WorkerConfig.from_mapping({"config.providers": "file"})
    with pytest.raises(WorkerConfigError, match=r"not in config\.providers"):
        WorkerConfig.from_mapping({"config.providers.env.class": P + "EnvVarConfigProvider"})


def test_reverse_transform_restores_placeholders() -> None:
    raw = {"password": "${env:PW}", "topic": "t"}
    resolved = {"password": "s3cret", "topic": "t"}
    task = {"password": "s3cret", "topic": "t", "task.id": "0"}
    assert reverse_transform(task, raw, resolved) == {
        "password": "${env:PW}",
        "topic": "t",
        "task.id": "0",
    }
