"""``RegistryServer``: the ``_schemas`` log, the registry and its HTTP listener, as one unit.

Start order: the log (topic created if missing, compacted, one partition as Confluent's; read
to its end, so the first request already sees every schema), then uvicorn on its own thread
and port. ``schema registry listening address=host:port`` is logged once the socket accepts,
which scripts and tests wait for. Stop order is the reverse.

The registry talks to Kafka only through the standard client (``KafkaBasedLog`` over
confluent-kafka), so it runs against the embedded broker or any Kafka cluster alike; it keeps
no files of its own.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Any

import uvicorn

from hub.runtime.storage.kafka_log import KafkaBasedLog
from schema_registry.registry import SchemaRegistry
from schema_registry.rest import create_app
from schema_registry.state import RegistryState

log = logging.getLogger(__name__)

TOPIC = "_schemas"
DEFAULT_PORT = 8081


class RegistryServer:
    def __init__(
        self,
        client_config: dict[str, Any],
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        settings: Any = None,
        topic: str = TOPIC,
        replication_factor: int = -1,
        timeout: float = 30.0,
    ) -> None:
        self.host = host
        self.port = port
        self.state = RegistryState()
        self.log = KafkaBasedLog(
            topic, client_config, self.state.apply, partitions=1,
            replication_factor=replication_factor, timeout=timeout,
        )  # fmt: skip
        self.registry = SchemaRegistry(self.log, self.state)
        self.app = create_app(self.registry, settings)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, ready_timeout: float = 30.0) -> None:
        self.log.start()
        config = uvicorn.Config(
            self.app, host=self.host, port=self.port, log_level="warning", lifespan="off"
        )
        server = self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._serve, name="schema-registry", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + ready_timeout
        wait = threading.Event()
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.log.stop()
                raise RuntimeError(
                    f"schema registry could not listen on {self.host}:{self.port} (port in use? "
                    "choose another with --schema-registry-port, or 0 to disable it)"
                )
            wait.wait(0.01)
        sockets = [s for srv in getattr(server, "servers", []) for s in srv.sockets]
        if sockets:
            self.port = int(sockets[0].getsockname()[1])
        log.info("schema registry listening", extra={"address": f"{self.host}:{self.port}"})

    def _serve(self) -> None:
        assert self._server is not None
        with contextlib.suppress(SystemExit):  # uvicorn exits when it cannot bind: start() says
            self._server.run()

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self.log.stop()
