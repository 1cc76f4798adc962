"""Sluice: a connector/integration hub around a compact, Kafka-compatible commit-log broker.

This package is the application: the ``sluice`` command line (``cli``, ``commands``) and the
composition root (``node``) that builds and supervises the broker, the hub, the scheduler, the
pipelines service and the REST app (``web``). Its ``__init__`` (the version) and ``logs`` (the
log format) are leaves every layer may use. The layers themselves are the top-level packages
``broker``, ``kafka_admin``, ``hub``, ``connectors``, ``spark_pipelines`` and ``ui`` (see
docs/architecture.md and docs/structure.md).
"""

__version__ = "0.1.0"
