"""HDFS sink over WebHDFS, Confluent HDFS 3 sink compatible (see docs/connectors/hdfs.md).

Layout: ``config``, ``connector`` (connector and task), ``plugin``; the rolling writer, formats
and partitioners are in ``connectors._storage``. Only ``hub.api`` is imported from the hub.
"""

from connectors.hdfs.connector import HdfsSinkConnector

__all__ = ["HdfsSinkConnector"]
