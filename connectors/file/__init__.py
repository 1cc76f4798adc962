"""File connectors: tail files into a topic (the log-aggregation agent), append records to a file.

Layout: ``config`` (typed configs), ``connector`` (the two connectors), ``source_task`` and
``sink_task`` (the work), ``plugin`` (pluggy registration); ``_tailer`` follows one path across
rotation, ``_identity`` tells files apart (inode, fingerprint), ``_emitter`` turns bytes into
numbered events, ``_multiline`` joins lines into events, ``_discovery`` expands globs and
splits files among tasks, ``_records`` builds records fast. Only ``hub.api`` is imported from
the hub.
"""

from connectors.file.connector import FileSinkConnector, FileSourceConnector

__all__ = ["FileSinkConnector", "FileSourceConnector"]
