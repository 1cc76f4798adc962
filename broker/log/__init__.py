"""Partition log storage: segmented, append-only commit logs in Kafka's on-disk format.

Entry points are ``log_manager.LogManager`` (topics, metadata, background threads) and
``partition_log.PartitionLog`` (one partition). ``docs/storage.md`` describes the files, the
append and read paths, durability, recovery, retention and compaction.
"""
