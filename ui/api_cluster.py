"""``/console/api/cluster`` (brokers with racks and the controller; every partition's leader,
replicas and ISR), ``/console/api/pipelines/defaults`` (what the pipeline form pre-fills) and a
connector plugin's config JSON Schema: the console's views that Kafka Connect's and the
pipelines' APIs do not give."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request

from hub.rest.errors import RestError
from kafka_admin import cluster as cluster_api
from kafka_admin import transactions as transactions_api
from ui.console_state import ConsoleDep, translated

router = APIRouter()


@router.get("/cluster")
def cluster(console: ConsoleDep) -> dict[str, Any]:
    with translated():
        return cluster_api.brokers(console.admin)


@router.get("/cluster/partitions")
def cluster_partitions(console: ConsoleDep, internal: bool = False) -> list[dict[str, Any]]:
    with translated():
        rows = cluster_api.partitions(console.admin)
    return [r for r in rows if internal or not r["internal"]]


@router.get("/pipelines/defaults")
def pipeline_defaults(console: ConsoleDep) -> dict[str, Any]:
    """Values a new pipeline's config can start from: this cluster's brokers, a checkpoint
    directory under the first ``file.allowed.paths`` root (the runs may write only there),
    and the user topics."""
    with translated():
        md = console.admin.metadata()
        topics = sorted(t for t in md.topics if not console.admin.is_internal(t))
    roots_of = getattr(console.worker_config, "file_roots", None)
    roots = [Path(r) for r in roots_of()] if roots_of else []
    return {
        "bootstrap_servers": _users_bootstrap(console.worker_config),
        "checkpoint_root": str(roots[0] / "checkpoints") if roots else None,
        "file_root": str(roots[0]) if roots else None,
        "topics": topics,
    }


def _users_bootstrap(worker_config: Any) -> str:
    """Where users' clients connect: ``console.bootstrap.servers`` when the hub has a listener
    of its own (``sluice up``'s default broker), else the worker's ``bootstrap.servers``."""
    raw = worker_config.raw() if hasattr(worker_config, "raw") else {}
    return str(
        raw.get("console.bootstrap.servers")
        or worker_config.client_config("admin")["bootstrap.servers"]
    )


@router.get("/connector-plugins/{plugin}/schema")
def plugin_schema(request: Request, plugin: str) -> dict[str, Any]:
    """The JSON Schema of a connector plugin's config model (keys by their user-facing names):
    the new-connector form takes enum choices and types from it, which Connect's
    ``ConfigKeyInfo`` list cannot carry."""
    describe = getattr(request.app.state.herder, "plugin_config_schema", None)
    if describe is None:
        raise RestError(404, "This hub does not describe plugin configs")
    try:
        schema: dict[str, Any] = describe(plugin)
    except LookupError as exc:  # the runtime's NotFoundError
        raise RestError(404, str(exc)) from None
    return schema


@router.get("/transactions")
def transactions(console: ConsoleDep) -> list[dict[str, Any]]:
    with translated():
        return transactions_api.list_transactions(console.admin)


@router.get("/transactions/{transactional_id}")
def transaction(console: ConsoleDep, transactional_id: str) -> dict[str, Any]:
    with translated():
        return transactions_api.describe_transaction(console.admin, transactional_id)
