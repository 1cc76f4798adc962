"""A hub worker with the sample plugins, in its own process, for crash (kill -9) tests.

``python -m tests.hub.runtime.worker_main SETTINGS.json CONNECTORS.json``: starts a Herder
with ``SampleRegistry`` and the worker settings, creates the listed connectors unless they
already exist (a restart finds them in the config topic), logs ``worker ready`` and runs
until SIGTERM (clean stop) or SIGKILL.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import threading
from pathlib import Path

from hub.runtime.config import WorkerConfig
from hub.runtime.herder import Herder
from sluice.logs import setup_logging
from tests.hub.runtime.sample_plugins import sample_registry

log = logging.getLogger("worker_main")


def main(settings_path: str, connectors_path: str) -> None:
    setup_logging("INFO")
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    config = WorkerConfig.from_file(Path(settings_path))
    herder = Herder(config, registry=sample_registry())
    herder.start()
    for name, connector in json.loads(Path(connectors_path).read_text()).items():
        if name not in herder.connectors():
            herder.create_connector(name, connector)
    log.info("worker ready")
    stop.wait()
    herder.stop()
    log.info("worker stopped")


if __name__ == "__main__":
    main(*sys.argv[1:3])
