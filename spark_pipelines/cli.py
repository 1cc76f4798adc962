"""``sluice pipelines list|describe|run``: Spark pipeline templates from the terminal.

``run`` starts Spark in this process (``--master``, default ``local[*]``; a ``spark://`` master
runs the driver here in client mode). With ``--hub URL`` it instead asks a running hub to run
the pipeline (``POST /pipelines`` + ``/run``), which then owns the process and its history.
pyspark is imported only when a pipeline runs, so ``sluice --help`` stays fast; without the
``spark`` extra ``run`` says which ``pip install`` adds it. A run in a terminal shows a progress
bar (rows and offsets per micro-batch, against the offsets available with ``--once``).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import typer

from sluice.terminal import ProgressOpt, Tracker, escape, fail, out, progress, success, table
from spark_pipelines.errors import MissingExtraError
from spark_pipelines.extra import SPARK_HINT, require_spark
from spark_pipelines.templates import NAMES, load

log = logging.getLogger(__name__)

pipelines_app = typer.Typer(
    help="Spark pipeline templates: list, describe, run.", no_args_is_help=True
)
TemplateArg = typer.Argument(..., help=f"A template: {', '.join(NAMES)}.")


def read_config(path: Path) -> dict[str, Any]:
    """A JSON (or, with PyYAML from the ``spark`` extra, YAML) config file."""
    text = path.read_text()
    if path.suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise ValueError(f"it is YAML and PyYAML is not installed: {SPARK_HINT}") from None
        return dict(yaml.safe_load(text))
    return dict(json.loads(text))


@pipelines_app.command("list")
def list_templates() -> None:
    """The templates and what each does."""
    rows = table("template", "description")
    for name in NAMES:
        rows.add_row(name, escape(load(name).DESCRIPTION))
    out.print(rows)


@pipelines_app.command()
def describe(name: str = TemplateArg) -> None:
    """A template's description and its config's JSON Schema."""
    module = _template(name)
    out.print(f"[bold]{name}[/]: {escape(module.DESCRIPTION)}\n")
    out.print_json(json.dumps(module.Config.model_json_schema()))


@pipelines_app.command()
def run(
    name: str = TemplateArg,
    config: Path = typer.Option(
        ..., "--config", exists=True, dir_okay=False, help="The template's config (JSON or YAML)."
    ),
    master: str = typer.Option("local[*]", "--master", help="Spark master URL."),
    once: bool = typer.Option(
        False, "--once", help="availableNow: process what is there, then stop."
    ),
    hub: str | None = typer.Option(
        None, "--hub", envvar="SLUICE_HUB_URL", help="Run it on this hub (its REST URL) instead."
    ),
    conf: list[str] = typer.Option(
        [],
        "--conf",
        help="Spark setting KEY=VALUE (repeatable; not with --hub),"
        " e.g. spark.sql.shuffle.partitions=16",
    ),
    progress_file: Path | None = typer.Option(None, hidden=True, help="append progress JSON lines"),
    allowed_paths: str | None = typer.Option(
        None,
        "--allowed-paths",
        help="Comma-separated directories local paths must lie under (the hub passes its "
        "file.allowed.paths); default: unrestricted",
    ),
    show_progress: bool = ProgressOpt,
) -> None:
    """Runs a template (continuously, or once with --once)."""
    if allowed_paths is not None:
        from hub.api.paths import set_allowed_roots

        set_allowed_roots([p for p in allowed_paths.split(",") if p.strip()])
    module = _template(name)
    try:
        raw = read_config(config)
    except (ValueError, OSError) as exc:  # JSON/YAML syntax, PyYAML missing, unreadable
        fail(f"cannot read {config}: {exc}", code=2)
    try:
        cfg = module.Config.model_validate(raw)
    except Exception as exc:
        fail(f"invalid config for {name}: {exc}", code=2)
    try:
        extra = spark_conf(conf)
    except ValueError as exc:
        fail(str(exc), code=2)
    if hub and extra:
        fail("--conf applies to runs in this process, not with --hub", code=2)
    if hub:
        _run_on_hub(hub, name, raw, once)
        return
    try:
        require_spark("sluice pipelines run")
    except MissingExtraError as exc:
        fail(str(exc))
    from spark_pipelines import runner

    spark = runner.build_session(master, app_name=f"sluice-{name}", extra=extra)
    with progress(name, force=show_progress, unit="rows") as bar:
        batches = BatchProgress(name, bar, once)

        def on_progress(p: dict[str, Any]) -> None:
            batches.update(p)
            if progress_file is not None:
                with progress_file.open("a") as f:
                    f.write(json.dumps(p) + "\n")

        try:
            result = runner.run(
                lambda s, configure: module.start(s, cfg, configure),
                spark,
                once=once,
                on_progress=on_progress,
            )
        except RuntimeError as exc:  # a query failed; Spark's own trace is in its log
            log.debug("pipeline failed", exc_info=True)
            fail(f"{name}: {str(exc).splitlines()[0]}")
    rate = result.rows / result.seconds if result.seconds else 0.0
    success(f"{name}: {result.rows} input rows in {result.seconds:.1f}s ({rate:,.0f} rows/s)")
    if progress_file is not None:
        with progress_file.open("a") as f:
            f.write(
                json.dumps({"summary": {"rows": result.rows, "seconds": result.seconds}}) + "\n"
            )


class BatchProgress:
    """Spark's per-micro-batch progress (``StreamingQueryProgress`` as a dict) on a bar.

    Each query's first batch fixes its base offset (the sum of its sources' ``startOffset``);
    the bar advances by the offsets each batch consumed (``endOffset``) and counts its input
    rows; with ``--once`` its total is what was available (``latestOffset``) when the batch was
    planned. Offsets are the data source's ``{topic: {partition: offset}}`` JSON.
    """

    def __init__(self, name: str, bar: Tracker, once: bool) -> None:
        self.name, self.bar, self.once = name, bar, once
        self._base: dict[str, int] = {}  # query id -> first start offset sum
        self._end: dict[str, int] = {}  # query id -> last end offset sum
        self._latest: dict[str, int] = {}

    def update(self, p: dict[str, Any]) -> None:
        query = str(p.get("id", ""))
        sources = p.get("sources") or []
        start = sum(_offset_sum(s.get("startOffset")) for s in sources)
        end = sum(_offset_sum(s.get("endOffset")) for s in sources)
        latest = sum(_offset_sum(s.get("latestOffset")) for s in sources)
        self._base.setdefault(query, start)
        moved = max(0, end - self._end.get(query, self._base[query]))
        self._end[query] = max(end, self._end.get(query, 0))
        if latest:
            self._latest[query] = latest
        if self.once and self._latest:
            self.bar.set_total(sum(v - self._base.get(q, 0) for q, v in self._latest.items()))
        rows = int(p.get("numInputRows") or 0)
        self.bar.advance(
            moved,
            items=rows,
            description=f"{self.name} batch {p.get('batchId', '?')}: {rows:,} rows, "
            f"{moved:,} offsets",
        )


def _offset_sum(value: Any) -> int:
    """The sum of a ``{topic: {partition: offset}}`` offset (a dict or its JSON); 0 if none."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return 0
    if not isinstance(value, dict):
        return 0
    return sum(
        int(offset)
        for partitions in value.values()
        if isinstance(partitions, dict)
        for offset in partitions.values()
        if isinstance(offset, int) and offset >= 0
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
    import os

    import httpx

    from hub.rest.token_file import local_token

    # The hub's credential, as `sluice connectors` finds it (hub/rest/token_file.py).
    token = os.environ.get("SLUICE_REST_TOKEN") or local_token(
        url, os.environ.get("SLUICE_REST_TOKEN_FILE")
    )
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    pipeline = config.get("query_name") or name
    try:
        with httpx.Client(base_url=url, timeout=30, headers=headers) as client:
            resp = client.put(
                f"/pipelines/{pipeline}", json={"template": name, "config": config, "once": once}
            )
            _check(resp)
            _check(client.post(f"/pipelines/{pipeline}/run"))
    except httpx.HTTPError as exc:
        fail(f"cannot reach the hub at {url}: {exc}", "start one with `sluice up`")
    success(f"pipeline {pipeline} started on {url}; see GET {url}/pipelines/{pipeline}")


def _check(resp: Any) -> None:
    if resp.status_code >= 400:
        try:
            message = resp.json().get("message") or resp.text
        except ValueError:
            message = resp.text
        fail(f"the hub answered {resp.status_code}: {message}")


def _template(name: str) -> Any:
    try:
        return load(name)
    except KeyError as exc:
        fail(str(exc.args[0]), code=2)


def register(app: typer.Typer) -> None:
    """Adds ``sluice pipelines ...`` to the top-level app."""
    app.add_typer(pipelines_app, name="pipelines")
