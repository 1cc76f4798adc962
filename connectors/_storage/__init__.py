"""What the rolling-file sinks (S3, HDFS) share, split by axis as STYLE.md asks.

- ``config``: the Confluent storage-sink keys both sinks accept (``flush.size``, ``topics.dir``,
  ``format.class``, ``partitioner.class``, ...).
- ``partitioner``: record -> encoded partition directory (default, field, time-based).
- ``formats/``: records -> file bytes (JSON lines, Parquet, raw bytes) with optional compression.
- ``destinations/``: file bytes -> a store (``s3``, ``hdfs``), durably, with commit markers.
- ``writer``: per topic-partition rolling batches, rotation, deterministic names, recovery.
- ``sink_task``: the SinkTask both connectors run, parameterised by a destination factory.

Only ``hub.api`` is imported from the hub.
"""
