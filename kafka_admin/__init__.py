"""One Kafka admin layer: topics, configs, offsets, consumer groups (lag, resets, deletes),
message browsing and search, the cluster's shape, transactions and security (ACLs, SCRAM users,
quotas), over confluent-kafka (and kafka-python for the few APIs confluent-kafka lacks: log-dir
sizes, transactions, client quotas).

Used by the CLI (``sluice topics``, ``sluice groups``), the web console's backend and the hub
runtime (creating internal and output topics, a sink connector's offsets). It depends on
nothing else of Sluice, so every layer may use it and it works against any Kafka cluster.
Modules: ``client`` (``KafkaAdmin``: cluster, topics, configs, watermarks, DeleteRecords),
``cluster`` (brokers, replicas, ISR), ``groups``, ``browse`` (paged browse and search),
``filters``, ``records`` (a record's shown shape), ``messages`` (produce), ``transactions``,
``security``, ``errors``.
"""

from kafka_admin.client import KafkaAdmin
from kafka_admin.errors import AdminError, GroupBusyError, NotFoundError, OffsetCommitRefusedError

__all__ = [
    "AdminError",
    "GroupBusyError",
    "KafkaAdmin",
    "NotFoundError",
    "OffsetCommitRefusedError",
]
