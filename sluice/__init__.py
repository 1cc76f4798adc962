"""Sluice: a connector/integration hub around a compact, Kafka-compatible commit-log broker.

This package holds only what every layer shares: the ``sluice`` command line and logging setup.
The layers themselves are the top-level packages ``broker``, ``hub``, ``connectors`` and
``spark_pipelines`` (see ARCHITECTURE in docs/).
"""

__version__ = "0.1.0"
