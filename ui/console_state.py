"""What every console route shares: the per-app ``Console`` (admin client, rate sampler,
registry), the dependency that makes it, authentication, and Kafka errors as REST errors.

A cluster that does not answer becomes 503 with a message naming the Kafka cluster, so the
pages can tell "the hub is down" (no HTTP answer at all) from "the hub cannot reach Kafka"
(503 from ``/console/api``) and say which part is unreachable.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from confluent_kafka import KafkaError, KafkaException
from fastapi import Depends, Request

from hub.rest._settings import setting
from hub.rest.auth import AuthPolicy
from hub.rest.errors import RestError
from kafka_admin import GroupBusyError, KafkaAdmin
from ui import broker_metrics
from ui import schemas as schemas_api
from ui.rates import RateSampler

UNREACHABLE = "Cannot reach the Kafka cluster"
"""Start of every 503 message about the cluster (the pages' connection banner keys on 503)."""
_STATUS = {
    KafkaError.TOPIC_ALREADY_EXISTS: 409,
    KafkaError.UNKNOWN_TOPIC_OR_PART: 404,
    KafkaError.GROUP_ID_NOT_FOUND: 404,
    KafkaError.NON_EMPTY_GROUP: 409,
    KafkaError.INVALID_CONFIG: 400,
    KafkaError.INVALID_PARTITIONS: 400,
    KafkaError.INVALID_REPLICATION_FACTOR: 400,
    KafkaError.TOPIC_EXCEPTION: 400,
    KafkaError.POLICY_VIOLATION: 400,
    KafkaError.INVALID_REQUEST: 400,
    KafkaError.OFFSET_OUT_OF_RANGE: 400,
    KafkaError.SECURITY_DISABLED: 409,
    KafkaError.CLUSTER_AUTHORIZATION_FAILED: 403,
    KafkaError.TOPIC_AUTHORIZATION_FAILED: 403,
    KafkaError.GROUP_AUTHORIZATION_FAILED: 403,
    KafkaError.RESOURCE_NOT_FOUND: 404,
    KafkaError.UNSUPPORTED_SASL_MECHANISM: 400,
    KafkaError._TRANSPORT: 503,
    KafkaError._TIMED_OUT: 503,
    KafkaError._ALL_BROKERS_DOWN: 503,
}
_lock = threading.Lock()


class Console:
    """Per-app state: one admin client and one rate sampler, made on first use."""

    def __init__(self, worker_config: Any) -> None:
        client = worker_config.client_config("admin")
        internal = [
            setting(worker_config, key)
            for key in ("config.storage.topic", "offset.storage.topic", "status.storage.topic")
        ]
        self.worker_config = worker_config
        self.admin = KafkaAdmin(client, [t for t in internal if t])
        interval = float(setting(worker_config, "console.rates.interval.ms", 5000)) / 1000
        try:
            urls = broker_metrics.parse_urls(setting(worker_config, broker_metrics.SETTING))
        except ValueError as exc:
            raise RestError(503, str(exc)) from None
        self.rates = RateSampler(self.admin, interval=interval, metrics_urls=urls)
        registry = schemas_api.converter_settings(worker_config)  # schema.registry.url
        self.registry = schemas_api.Registry(registry) if registry else None


def worker_config(request: Request) -> Any:
    return getattr(request.app.state.herder, "config", None)


def authenticate(request: Request) -> None:
    policy: AuthPolicy = request.app.state.auth
    policy.check(request)


def console(request: Request) -> Console:
    state = request.app.state
    with _lock:
        found: Console | None = getattr(state, "console", None)
        if found is None:
            config = worker_config(request)
            if config is None or not hasattr(config, "client_config"):
                raise RestError(503, "The console needs a worker with bootstrap.servers")
            found = state.console = Console(config)
    found.rates.touch()
    return found


ConsoleDep = Annotated[Console, Depends(console)]


@contextmanager
def translated() -> Iterator[None]:
    """Kafka and input errors as Connect-shaped REST errors with a fitting status."""
    try:
        yield
    except KafkaException as exc:
        err = exc.args[0] if exc.args and isinstance(exc.args[0], KafkaError) else None
        status = _STATUS.get(err.code(), 500) if err is not None else 500
        text = err.str() if err is not None else str(exc)
        raise RestError(status, f"{UNREACHABLE}: {text}" if status == 503 else text) from exc
    except GroupBusyError as exc:
        raise RestError(409, str(exc)) from exc
    except LookupError as exc:
        raise RestError(404, str(exc.args[0] if exc.args else exc)) from exc
    except (ValueError, TypeError) as exc:
        raise RestError(400, str(exc)) from exc
    except TimeoutError as exc:
        raise RestError(503, f"{UNREACHABLE}: {exc or 'no answer in time'}") from exc
