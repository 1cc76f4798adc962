"""Spark pipelines: the ``sluice`` PySpark data source (``datasource/``), templates
(``templates/``), the runner and ``sluice pipelines``. See docs/pipelines.md.

Nothing here imports pyspark at package import time, so the hub and the CLI load without it.
"""
