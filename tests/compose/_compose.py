"""Reading compose/*.yml the way Docker Compose would, without a Docker engine.

A service runs the Sluice image when its ``image`` is ``sluice:local`` (built from the
Dockerfile); its command line is ``entrypoint + command`` with the image's ENTRYPOINT
(``sluice``) and CMD filling in what the service leaves out. Bind mounts (``./x:/etc/y``) map
container paths back to files in compose/, so a command line can be checked, or run, with the
very files the container would see.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
COMPOSE_DIR = REPO / "compose"
COMPOSE_FILES = ("quickstart.yml", "cluster.yml", "cluster.yml+cluster-secure.yml")
"""Each deployment: a file, or files applied in order (``docker compose -f A -f B``)."""
GENERATED = COMPOSE_DIR / "secrets"  # compose/gen-certs.sh writes it; git ignores it
SLUICE_IMAGE = "sluice:local"


def load(name: str) -> dict[str, Any]:
    """The compose file with YAML anchors and merge keys resolved (as Compose resolves them);
    ``A+B`` is file A overridden by file B."""
    if "+" in name:
        return load_merged(*name.split("+"))
    loaded: dict[str, Any] = yaml.safe_load((COMPOSE_DIR / name).read_text())
    return loaded


def load_merged(*names: str) -> dict[str, Any]:
    """``docker compose -f A -f B ...``: later files override earlier ones as Compose merges
    them (mappings merged key by key, ``volumes`` by container path, other lists replaced)."""
    merged: dict[str, Any] = {}
    for name in names:
        merged = _merge(merged, load(name))
    return merged


def _merge(base: Any, override: Any, key: str = "") -> Any:
    if isinstance(base, dict) and isinstance(override, dict):
        out = dict(base)
        for k, v in override.items():
            out[k] = _merge(base[k], v, k) if k in base else v
        return out
    if key == "volumes" and isinstance(base, list) and isinstance(override, list):
        by_target = {str(m).split(":")[1]: m for m in base}
        by_target.update({str(m).split(":")[1]: m for m in override})
        return list(by_target.values())
    return override


@functools.cache
def dockerfile_exec(instruction: str) -> list[str]:
    """The exec-form JSON array of the Dockerfile's ENTRYPOINT or CMD."""
    for line in (REPO / "Dockerfile").read_text().splitlines():
        if line.startswith(instruction + " "):
            value: list[str] = json.loads(line[len(instruction) + 1 :])
            return value
    raise AssertionError(f"Dockerfile has no {instruction}")


@dataclass
class Service:
    name: str
    spec: dict[str, Any]
    binds: dict[str, Path] = field(default_factory=dict)  # container path -> file in compose/
    volumes: dict[str, str] = field(default_factory=dict)  # container path -> named volume

    @property
    def runs_sluice_image(self) -> bool:
        return self.spec.get("image") == SLUICE_IMAGE

    @property
    def argv(self) -> list[str]:
        """What the container executes: entrypoint + command, the image's where unset."""
        entrypoint = self.spec.get("entrypoint", dockerfile_exec("ENTRYPOINT"))
        if isinstance(entrypoint, str):
            entrypoint = entrypoint.split()
        command = self.spec.get("command")
        if command is None:
            # Compose (like docker run) drops the image's CMD when the entrypoint is overridden.
            command = [] if "entrypoint" in self.spec else dockerfile_exec("CMD")
        if isinstance(command, str):
            command = command.split()
        return [str(a) for a in [*entrypoint, *command]]

    @property
    def sluice_args(self) -> list[str] | None:
        """The arguments after ``sluice``, or None when the service runs something else."""
        argv = self.argv
        if not self.runs_sluice_image or not argv or argv[0] != "sluice":
            return None
        return argv[1:]

    def host_path(self, container_path: str) -> Path | None:
        """The compose/ file or directory a container path comes from, if bind-mounted."""
        for target, source in self.binds.items():
            if container_path == target:
                return source
            if container_path.startswith(target.rstrip("/") + "/"):
                return source / container_path[len(target.rstrip("/")) + 1 :]
        return None

    def volume_for(self, container_path: str) -> str | None:
        """The named volume holding ``container_path`` in this container, if any."""
        for target, volume in self.volumes.items():
            if container_path == target or container_path.startswith(target.rstrip("/") + "/"):
                return volume
        return None

    def environment(self) -> dict[str, str]:
        env = self.spec.get("environment", {})
        if isinstance(env, list):
            env = dict(item.split("=", 1) for item in env)
        return {str(k): str(v) for k, v in env.items()}


def services(doc: dict[str, Any]) -> dict[str, Service]:
    out: dict[str, Service] = {}
    for name, spec in doc["services"].items():
        service = Service(name, spec)
        for mount in spec.get("volumes", []):
            assert isinstance(mount, str), f"{name}: use the short volume syntax"
            source, target = mount.split(":")[:2]
            if source.startswith("."):
                service.binds[target] = (COMPOSE_DIR / source).resolve()
            else:
                service.volumes[target] = source
        out[name] = service
    return out


def with_host_paths(service: Service, args: list[str]) -> list[str]:
    """``args`` with every bind-mounted container path replaced by its file in compose/."""
    mapped = []
    for arg in args:
        source = service.host_path(arg)
        mapped.append(str(source) if source is not None else arg)
    return mapped


@functools.cache
def _cli() -> Any:
    from sluice.cli import build

    return build()


def parse(args: list[str]) -> tuple[list[str], dict[str, Any]]:
    """(sub-command path, parsed parameters) of ``sluice ARGS``, parsed by the real CLI
    (types, required options, ``exists=True`` paths) without running the command; raises the
    CLI's usage error on a bad command line."""
    command = _cli()
    ctx = command.make_context("sluice", list(args))
    path: list[str] = []
    while hasattr(command, "resolve_command"):  # a group: descend into the sub-command
        rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
        name, command, rest = command.resolve_command(ctx, rest)
        ctx = command.make_context(name, rest, parent=ctx)
        path.append(name)
    return path, dict(ctx.params)
