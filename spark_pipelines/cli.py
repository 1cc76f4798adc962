"""``sluice pipelines list|describe|run``: Spark pipeline templates from the terminal.

``run`` starts Spark in this process (``--master``, default ``local[*]``; a ``spark://`` master
runs the driver here in client mode). With ``--hub URL`` it instead asks a running hub to run
the pipeline (``POST /pipelines`` + ``/run``), which then owns the process and its history.
pyspark is imported only when a pipeline runs, so ``sluice --help`` stays fast.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from spark_pipelines.templates import NAMES, load

log = logging.getLogger(__name__)

pipelines_app = typer.Typer(
    help="Spark pipeline templates: list, describe, run.", no_args_is_help=True
)
out = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def read_config(path: Path) -> dict[str, Any]:
    """A JSON (or, when PyYAML is installed, YAML) config file."""
    text = path.read_text()
    if path.suffix in (".yaml", ".yml"):
        import yaml  # type: ignore[import-untyped]

        return dict(yaml.safe_load(text))
    return dict(json.loads(text))


@pipelines_app.command("list")
def list_templates() -> None:
    """The templates and what each does."""
    table = Table("template", "description")
    for name in NAMES:
        table.add_row(name, load(name).DESCRIPTION)
    out.print(table)


@pipelines_app.command()
def describe(name: str) -> None:
    """A template's description and its config's JSON Schema."""
    module = _template(name)
    out.print(f"[bold]{name}[/]: {module.DESCRIPTION}\n")
    out.print_json(json.dumps(module.Config.model_json_schema()))


@pipelines_app.command()
def run(
    name: str,
    config: Path = typer.Option(
        ..., "--config", exists=True, dir_okay=False, help="JSON/YAML config"
    ),
    master: str = typer.Option("local[*]", "--master", help="Spark master URL"),
    once: bool = typer.Option(
        False, "--once", help="availableNow: process what is there, then stop"
    ),
    hub: str | None = typer.Option(None, "--hub", envvar="SLUICE_HUB_URL", help="run via a hub"),
    conf: list[str] = typer.Option(
        [],
        "--conf",
        help="Spark setting KEY=VALUE (repeatable; not with --hub),"
        " e.g. spark.sql.shuffle.partitions=16",
    ),
    progress_file: Path | None = typer.Option(None, hidden=True, help="append progress JSON lines"),
) -> None:
    """Runs a template (continuously, or once with --once)."""
    module = _template(name)
    raw = read_config(config)
    try:
        cfg = module.Config.model_validate(raw)
    except Exception as exc:
        err.print(f"[red]invalid config for {name}:[/] {exc}")
        raise typer.Exit(2) from None
    try:
        extra = spark_conf(conf)
    except ValueError as exc:
        err.print(f"[red]{exc}[/]")
        raise typer.Exit(2) from None
    if hub and extra:
        err.print("[red]--conf applies to runs in this process, not with --hub[/]")
        raise typer.Exit(2)
    if hub:
        _run_on_hub(hub, name, raw, once)
        return
    from spark_pipelines import runner

    spark = runner.build_session(master, app_name=f"sluice-{name}", extra=extra)

    def on_progress(p: dict[str, Any]) -> None:
        if progress_file is not None:
            with progress_file.open("a") as f:
                f.write(json.dumps(p) + "\n")

    result = runner.run(
        lambda s, configure: module.start(s, cfg, configure),
        spark,
        once=once,
        on_progress=on_progress,
    )
    rate = result.rows / result.seconds if result.seconds else 0.0
    out.print(f"{name}: {result.rows} input rows in {result.seconds:.1f}s ({rate:,.0f} rows/s)")
    if progress_file is not None:
        with progress_file.open("a") as f:
            f.write(
                json.dumps({"summary": {"rows": result.rows, "seconds": result.seconds}}) + "\n"
            )


def spark_conf(items: list[str]) -> dict[str, str]:
    """``--conf KEY=VALUE`` options as a dict (later ones win)."""
    settings = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--conf needs KEY=VALUE, got {item!r}")
        settings[key.strip()] = value
    return settings


def _run_on_hub(url: str, name: str, config: dict[str, Any], once: bool) -> None:
    import httpx

    pipeline = config.get("query_name") or name
    with httpx.Client(base_url=url, timeout=30) as client:
        resp = client.put(
            f"/pipelines/{pipeline}", json={"template": name, "config": config, "once": once}
        )
        resp.raise_for_status()
        resp = client.post(f"/pipelines/{pipeline}/run")
        resp.raise_for_status()
    out.print(f"pipeline {pipeline} started on {url}; see GET {url}/pipelines/{pipeline}")


def _template(name: str) -> Any:
    try:
        return load(name)
    except KeyError as exc:
        err.print(f"[red]{exc.args[0]}[/]")
        raise typer.Exit(2) from None


def register(app: typer.Typer) -> None:
    """Adds ``sluice pipelines ...`` to the top-level app."""
    app.add_typer(pipelines_app, name="pipelines")
