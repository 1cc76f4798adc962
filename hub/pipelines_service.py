"""Pipelines managed by the hub: definitions, schedules and runs as ``sluice pipelines run``.

Each run is a subprocess (``python -m sluice pipelines run NAME --config ... --once``): Spark's
JVM and its memory stay out of the worker, a stuck run can be stopped by its pid, and a worker
restart does not kill a run's Spark state (checkpoints make the next run continue anyway).

State lives in ``<data dir>/pipelines/``: ``pipelines.json`` (definitions), one directory per
pipeline with its ``config.json``, ``runs.json`` (the last ``KEEP_RUNS`` runs) and each run's
``progress`` (JSON lines: Spark's query progress) and ``log``. Cron schedules run through an
apscheduler ``BackgroundScheduler``; a scheduled run that finds the previous one still running
is skipped (logged), never queued twice. All methods are thread-safe (one lock).
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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

KEEP_RUNS = 20
STOP_GRACE_S = 20.0


class PipelineError(Exception):
    """A pipeline request cannot be served; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str, errors: dict[str, list[str]] | None = None):
        super().__init__(message)
        self.status, self.message, self.errors = status, message, errors or {}


@dataclass
class Run:
    id: str
    trigger: str  # "manual" | "schedule"
    started: float
    pid: int | None = None
    finished: float | None = None
    exit_code: int | None = None
    state: str = "RUNNING"  # RUNNING | SUCCEEDED | FAILED | STOPPED


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
    def __init__(self, data_dir: Path, *, python: str = sys.executable, start: bool = True):
        self.dir = Path(data_dir)  # created on the first write, not here
        self.python = python
        self._lock = threading.RLock()
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._stopping: set[str] = set()
        self.pipelines: dict[str, Pipeline] = {}
        path = self.dir / "pipelines.json"
        if path.exists():
            for raw in json.loads(path.read_text()).values():
                self.pipelines[raw["name"]] = Pipeline(**raw)
        from apscheduler.schedulers.background import BackgroundScheduler

        self.scheduler = BackgroundScheduler(timezone="UTC")
        for p in self.pipelines.values():
            self._schedule(p)
        if start:
            self.scheduler.start()

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
        from spark_pipelines.templates import load

        try:
            module = load(template)
        except KeyError as exc:
            raise PipelineError(400, str(exc.args[0]), {"template": [str(exc.args[0])]}) from None
        try:
            module.Config.model_validate(config)
        except Exception as exc:
            errors = {
                ".".join(map(str, e["loc"])): [e["msg"]] for e in getattr(exc, "errors", list)()
            }
            raise PipelineError(400, f"invalid config for template {template}", errors) from None
        if schedule is not None:
            self._cron(schedule)
        with self._lock:
            if name in self.pipelines and not replace:
                raise PipelineError(409, f"pipeline {name} already exists")
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
                raise PipelineError(404, f"pipeline {name} not found")
            return self.pipelines[name]

    # --- runs --------------------------------------------------------------------------------
    def run_now(self, name: str, trigger: str = "manual") -> Run:
        pipeline = self.get(name)
        with self._lock:
            proc = self._procs.get(name)
            if proc is not None and proc.poll() is None:
                raise PipelineError(409, f"pipeline {name} is already running (pid {proc.pid})")
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
            env = dict(os.environ, PYSPARK_PYTHON=os.environ.get("PYSPARK_PYTHON", self.python))
            with open(home / f"{run.id}.log", "ab") as out:
                proc = subprocess.Popen(
                    cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
                )
            run.pid = proc.pid
            self._procs[name] = proc
            self._stopping.discard(name)
            self._append_run(name, run)
        threading.Thread(target=self._watch, args=(name, run, proc), daemon=True).start()
        log.info("pipeline %s: run %s started (pid %d, %s)", name, run.id, proc.pid, trigger)
        return run

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

    def close(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

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
        _write_json(self.dir / "pipelines.json", {n: asdict(p) for n, p in self.pipelines.items()})

    @staticmethod
    def _cron(expr: str) -> Any:
        from apscheduler.triggers.cron import CronTrigger

        try:
            return CronTrigger.from_crontab(expr, timezone="UTC")
        except ValueError as exc:
            raise PipelineError(
                400, f"invalid cron schedule: {exc}", {"schedule": [str(exc)]}
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
        try:
            self.run_now(name, trigger="schedule")
        except PipelineError as exc:
            log.warning("pipeline %s: scheduled run skipped: %s", name, exc.message)


def _write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(value, indent=1))
    tmp.replace(path)
