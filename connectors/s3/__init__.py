"""S3 sink: topics -> objects in a bucket, Confluent S3 sink compatible (see docs/connectors/s3.md).

Layout: ``config`` (the S3 keys over the shared storage keys), ``connector`` (connector and
task), ``plugin`` (pluggy registration). The rolling writer, formats and partitioners are in
``connectors._storage``. Only ``hub.api`` is imported from the hub.
"""

from connectors.s3.connector import S3SinkConnector

__all__ = ["S3SinkConnector"]
