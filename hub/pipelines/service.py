"""Pipelines managed by the hub: definitions, schedules and runs as ``sluice pipelines run``.

Each run is a subprocess (``python -m sluice pipelines run NAME --config ... --once``): Spark's
JVM and its memory stay out of the worker, a stuck run can be stopped by its pid, and a worker
restart does not kill a run's Spark state (checkpoints make the next run continue anyway).

State lives in ``<data dir>/pipelines/``: ``pipelines.json`` (definitions), one directory per
pipeline with its ``config.json``, ``runs.json`` (the last ``KEEP_RUNS`` runs) and each run's
``progress`` (JSON lines: Spark's query progress) and ``log``. Cron schedules run as jobs of
the apscheduler scheduler the application passes in (one per process, started and stopped by
the composition root); a scheduled run that finds the previous one still running is skipped
(logged), never queued twice. The templates come from a ``TemplateCatalogue`` the application
passes in too (``spark_pipelines.templates``), so this service imports no Spark code. All
methods are thread-safe (one lock).
Errors: ``hub.pipelines.errors``.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from dataclasses import replace as copy_of
from pathlib import Path
from typing import Any, Protocol

from hub.pipelines.errors import (
    InvalidPipelineError,
    PipelineConflictError,
    PipelineError,
    PipelineNotFoundError,
    PipelinesUnavailableError,
)

log = logging.getLogger(__name__)

KEEP_RUNS = 20
STOP_GRACE_S = 20.0


class TemplateCatalogue(Protocol):
    """What the service needs of ``spark_pipelines.templates``."""

    @property
    def NAMES(self) -> Sequence[str]:
        """The template names, in listing order."""

    def load(self, name: str) -> Any:
        """The template module (``Config`` model, ``DESCRIPTION``); KeyError if unknown."""

    def unavailable(self) -> str | None:
        """Why no pipeline can run in this installation (a missing extra), or None."""


@dataclass
class Run:
    id: str
    trigger: str  # "manual" | "schedule"
    started: float
    pid: int | None = None
    finished: float | None = None
    exit_code: int | None = None
    state: str = "RUNNING"  # RUNNING | SUCCEEDED | FAILED | STOPPED
    error: str | None = None  # why a run could not start


@dataclass
class Pipeline:
    name: str
    template: str
    config: dict[str, Any]
    schedule: str | None = None
    once: bool = True
    master: str = "local[*]"
    created: float = field(default_factory=time.time)


class PipelinesService:
    def __init__(
        self,
        data_dir: Path,
        templates: TemplateCatalogue,
        scheduler: Any,
        *,
        python: str = sys.executable,
        allowed_paths: Sequence[str] | None = None,
    ) -> None:
        """``scheduler`` is an apscheduler ``BackgroundScheduler`` owned (started, shut down)
        by the caller; this service only adds and removes its jobs. ``allowed_paths`` (the
        worker's ``file.allowed.paths`` roots) are handed to each run, which checks its local
        paths against them again (``sluice pipelines run --allowed-paths``); None: no check."""
        self.dir = Path(data_dir)  # created on the first write, not here
        self.templates = templates
        self.python = python
        self.allowed_paths = list(allowed_paths) if allowed_paths is not None else None
        self._lock = threading.RLock()
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._stopping: set[str] = set()
        self.pipelines: dict[str, Pipeline] = {}
        # Entries of pipelines.json that could not be loaded: kept as they are on every save.
        self._unloaded: dict[str, Any] = {}
        self._load(self.dir / "pipelines.json")
        self.scheduler = scheduler
        for p in list(self.pipelines.values()):
            try:
                self._schedule(p)
            except Exception as exc:  # one bad schedule must not keep the others (or the hub) down
                log.error(
                    "pipeline %s: schedule %r not installed; runs only on request: %s",
                    p.name, p.schedule, exc,
                )  # fmt: skip

    def _load(self, path: Path) -> None:
        """Loads every pipeline it can. An unreadable file is moved aside (never overwritten by
        the next save) and one entry that cannot be loaded leaves the others loaded."""
        if not path.exists():
            return
        try:
            entries = json.loads(path.read_text())
            if not isinstance(entries, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as exc:
            aside = path.with_name(f"{path.name}.unreadable-{int(time.time())}")
            path.replace(aside)
            log.error("pipelines file unreadable (%s); moved to %s, no pipeline loaded", exc, aside)
            return
        for key, raw in entries.items():
            try:
                pipeline = Pipeline(**raw)
            except Exception as exc:
                self._unloaded[key] = raw
                log.error("pipeline %s: definition cannot be loaded, kept as it is: %s", key, exc)
                continue
            self.pipelines[pipeline.name] = pipeline

    def template_list(self) -> list[dict[str, Any]]:
        """Every template with its description and config JSON Schema."""
        return [
            {
                "name": n,
                "description": self.templates.load(n).DESCRIPTION,
                "config_schema": self.templates.load(n).Config.model_json_schema(),
            }
            for n in self.templates.NAMES
        ]

    # --- definitions -------------------------------------------------------------------------
    def create(
        self,
        name: str,
        template: str,
        config: dict[str, Any],
        *,
        schedule: str | None = None,
        once: bool = True,
        master: str = "local[*]",
        replace: bool = False,
    ) -> Pipeline:
        try:
            module = self.templates.load(template)
        except KeyError as exc:
            raise InvalidPipelineError(str(exc.args[0]), {"template": [str(exc.args[0])]}) from None
        try:
            parsed = module.Config.model_validate(config)
        except Exception as exc:
            errors = {
                ".".join(map(str, e["loc"])): [e["msg"]] for e in getattr(exc, "errors", list)()
            }
            raise InvalidPipelineError(f"invalid config for template {template}", errors) from None
        check = getattr(module, "check", None)  # templates taking user SQL vet it (sql_guard)
        refused = check(parsed) if check is not None else {}
        if refused:
            reasons = "; ".join(r for rs in refused.values() for r in rs)
            raise InvalidPipelineError(
                f"refused config for template {template}: {reasons}", refused
            )
        if schedule is not None:
            self._cron(schedule)
        with self._lock:
            if name in self.pipelines and not replace:
                raise PipelineConflictError(f"pipeline {name} already exists")
            pipeline = Pipeline(name, template, config, schedule, once, master)
            self.pipelines[name] = pipeline
            self._save()
            self._schedule(pipeline)
        log.info("pipeline %s: defined (template %s, schedule %s)", name, template, schedule)
        return pipeline

    def delete(self, name: str) -> None:
        self.get(name)
        self.stop(name)
        with self._lock:
            self.pipelines.pop(name, None)
            if self.scheduler.get_job(name):
                self.scheduler.remove_job(name)
            self._save()
        log.info("pipeline %s: deleted", name)

    def get(self, name: str) -> Pipeline:
        with self._lock:
            if name not in self.pipelines:
                raise PipelineNotFoundError(f"pipeline {name} not found")
            return self.pipelines[name]

    # --- runs --------------------------------------------------------------------------------
    def run_now(self, name: str, trigger: str = "manual") -> Run:
        pipeline = self.get(name)
        reason = self.templates.unavailable()
        if reason is not None:  # refused here: the run's subprocess would only die of it
            raise PipelinesUnavailableError(reason)
        with self._lock:
            proc = self._procs.get(name)
            if proc is not None and proc.poll() is None:
                raise PipelineConflictError(f"pipeline {name} is already running (pid {proc.pid})")
            run = Run(uuid.uuid4().hex[:12], trigger, time.time())
            home = self.dir / name
            home.mkdir(parents=True, exist_ok=True)
            (home / "config.json").write_text(json.dumps(pipeline.config))
            cmd = [
                self.python,
                "-m",
                "sluice",
                "pipelines",
                "run",
                pipeline.template,
                "--config",
                str(home / "config.json"),
                "--master",
                pipeline.master,
                "--progress-file",
                str(home / f"{run.id}.progress"),
            ]
            if pipeline.once:
                cmd.append("--once")
            if self.allowed_paths is not None:  # the run checks its paths against them too
                cmd += ["--allowed-paths", ",".join(self.allowed_paths)]
            env = dict(os.environ, PYSPARK_PYTHON=os.environ.get("PYSPARK_PYTHON", self.python))
            with open(home / f"{run.id}.log", "ab") as out:
                proc = subprocess.Popen(
                    cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
                )
            run.pid = proc.pid
            self._procs[name] = proc
            self._stopping.discard(name)
            self._append_run(name, run)
            started = copy_of(run)  # as started: the watcher may finish ``run`` at once
        threading.Thread(target=self._watch, args=(name, run, proc), daemon=True).start()
        log.info("pipeline %s: run %s started (pid %d, %s)", name, run.id, proc.pid, trigger)
        return started

    def stop(self, name: str) -> bool:
        """Stops the running run (SIGTERM, then SIGKILL after a grace period); False if idle."""
        self.get(name)
        with self._lock:
            proc = self._procs.get(name)
            if proc is None or proc.poll() is not None:
                return False
            self._stopping.add(name)
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        return True

    def _watch(self, name: str, run: Run, proc: subprocess.Popen[bytes]) -> None:
        code = proc.wait()
        with self._lock:
            run.finished, run.exit_code = time.time(), code
            run.state = (
                "STOPPED" if name in self._stopping else ("SUCCEEDED" if code == 0 else "FAILED")
            )
            self._update_run(name, run)
        log.info("pipeline %s: run %s %s (exit %d)", name, run.id, run.state, code)

    def status(self, name: str) -> dict[str, Any]:
        pipeline = self.get(name)
        runs = self.runs(name)
        running = bool(runs) and runs[-1]["state"] == "RUNNING"
        last = self._last_progress(name, runs[-1]["id"]) if runs else None
        job = self.scheduler.get_job(name)
        # A job of a scheduler that is not started (yet) has no next_run_time attribute.
        when = getattr(job, "next_run_time", None)
        next_run = when.isoformat() if when else None
        return {
            **asdict(pipeline),
            "state": "RUNNING" if running else "IDLE",
            "next_run": next_run,
            "last_progress": last,
            "runs": runs,
        }

    def runs(self, name: str) -> list[dict[str, Any]]:
        path = self.dir / name / "runs.json"
        return list(json.loads(path.read_text())) if path.exists() else []

    def run_log(self, name: str, run_id: str, max_bytes: int = 65536) -> str:
        """The last ``max_bytes`` of a run's output (stdout and stderr of its process)."""
        self.get(name)
        if run_id not in {r["id"] for r in self.runs(name)}:
            raise PipelineNotFoundError(f"pipeline {name} has no run {run_id}")
        path = self.dir / name / f"{run_id}.log"
        if not path.exists():
            return ""
        with path.open("rb") as f:
            f.seek(max(path.stat().st_size - max_bytes, 0))
            return f.read().decode("utf-8", errors="replace")

    def close(self) -> None:
        """Removes this service's schedule jobs (the scheduler itself is the owner's)."""
        for name in list(self.pipelines):
            if self.scheduler.get_job(name):
                self.scheduler.remove_job(name)

    # --- helpers -----------------------------------------------------------------------------
    def _last_progress(self, name: str, run_id: str) -> dict[str, Any] | None:
        path = self.dir / name / f"{run_id}.progress"
        if not path.exists():
            return None
        lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
        return json.loads(lines[-1]) if lines else None

    def _append_run(self, name: str, run: Run) -> None:
        runs = [*self.runs(name), asdict(run)][-KEEP_RUNS:]
        _write_json(self.dir / name / "runs.json", runs)

    def _update_run(self, name: str, run: Run) -> None:
        if name not in self.pipelines:
            return
        runs = [asdict(run) if r["id"] == run.id else r for r in self.runs(name)]
        _write_json(self.dir / name / "runs.json", runs)

    def _save(self) -> None:
        saved = {**self._unloaded, **{n: asdict(p) for n, p in self.pipelines.items()}}
        _write_json(self.dir / "pipelines.json", saved)

    @staticmethod
    def _cron(expr: str) -> Any:
        from apscheduler.triggers.cron import CronTrigger

        try:
            return CronTrigger.from_crontab(expr, timezone="UTC")
        except ValueError as exc:
            raise InvalidPipelineError(
                f"invalid cron schedule: {exc}", {"schedule": [str(exc)]}
            ) from None

    def _schedule(self, pipeline: Pipeline) -> None:
        if self.scheduler.get_job(pipeline.name):
            self.scheduler.remove_job(pipeline.name)
        if pipeline.schedule:
            self.scheduler.add_job(
                self._scheduled,
                self._cron(pipeline.schedule),
                args=[pipeline.name],
                id=pipeline.name,
                coalesce=True,
                max_instances=1,
            )

    def _scheduled(self, name: str) -> None:
        """A cron job: runs on the scheduler's thread, so nothing may escape it. A run that
        cannot start is logged with the pipeline's name and recorded as FAILED (with why);
        the next tick of the schedule is the retry."""
        try:
            self.run_now(name, trigger="schedule")
        except PipelineError as exc:
            log.warning("pipeline %s: scheduled run skipped: %s", name, exc.message)
        except Exception as exc:
            log.error("pipeline %s: scheduled run could not start", name, exc_info=exc)
            failed = Run(uuid.uuid4().hex[:12], "schedule", time.time(), state="FAILED")
            failed.finished, failed.error = failed.started, f"{type(exc).__name__}: {exc}"
            try:
                with self._lock:
                    self._append_run(name, failed)
            except OSError:
                log.exception("pipeline %s: the failed run could not be recorded", name)


def _write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(value, indent=1))
    tmp.replace(path)
