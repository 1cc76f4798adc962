"""The stable contract every Sluice plugin codes against.

Connector packages import only from ``hub.api``; it imports nothing from the runtime, the REST
API or the broker (a test enforces this), so a plugin keeps working as the runtime changes.

A minimal source connector::

    from hub.api import ConfigModel, SourceConnector, SourceRecord, SourceTask

    class CounterConfig(ConfigModel):
        topic: str

    class CounterTask(SourceTask):
        def start(self, config):
            self.topic = config["topic"]
            last = self.context.offset_reader.offset({"counter": "main"})
            self.n = last["n"] if last else 0

        def poll(self):
            self.n += 1
            return [SourceRecord(topic=self.topic, value=self.n,
                                 source_partition={"counter": "main"},
                                 source_offset={"n": self.n})]

        def stop(self):
            pass

    class CounterConnector(SourceConnector):
        name = "counter"
        config_model = CounterConfig

        def start(self, config):
            self.config = config

        @classmethod
        def task_class(cls):
            return CounterTask

        def task_configs(self, max_tasks):
            return [{"topic": self.config.topic}]

Register it with the ``sluice_connectors`` hook (see docs/plugins.md).

A task emitting many small records per poll can return a ``SourceRecordBatch`` instead (one
topic and source partition, held as columns), which the worker can produce without an object
per record; see its docstring and docs/runtime.md. A sink task's ``put`` receives a
``SinkRecordBatch``: a sequence of records that also offers the consumed bytes as columns (see
docs/plugins.md).

Speed through the contract, not around it: a converter states its ``raw_form()`` (the bytes are
text in one encoding, or are the value) so the runtime can skip calling it per record, and a
connector builds records at high rates with ``record_factory`` (positional, equal to the
constructor) instead of touching the records' internals.
"""

from hub.api.config import ConfigModel, validate_config
from hub.api.connector import Connector, ConnectorContext
from hub.api.converter import (
    Converter,
    HeaderConverter,
    HeaderRawForm,
    RawForm,
    SchemaAndValue,
)
from hub.api.errors import ConfigError, ConnectError, DataError, RetriableError
from hub.api.exactly_once import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    TransactionContext,
)
from hub.api.password import Password, is_password, password_keys
from hub.api.record import (
    ConnectRecord,
    Header,
    SinkRecord,
    SourceRecord,
    TimestampType,
    TopicPartition,
)
from hub.api.record_factory import record_factory
from hub.api.schema import Field, Schema, Type
from hub.api.sink import (
    RawConversion,
    SinkConnector,
    SinkRecordBatch,
    SinkTask,
    SinkTaskContext,
)
from hub.api.source import (
    OffsetReader,
    PollResult,
    SourceConnector,
    SourceRecordBatch,
    SourceTask,
    SourceTaskContext,
)
from hub.api.transform import Predicate, Transformation
from hub.api.upstream import KAFKA_CONNECT, UpstreamKeys

__all__ = [
    "KAFKA_CONNECT",
    "ConfigError",
    "ConfigModel",
    "ConnectError",
    "ConnectRecord",
    "Connector",
    "ConnectorContext",
    "ConnectorTransactionBoundaries",
    "Converter",
    "DataError",
    "ExactlyOnceSupport",
    "Field",
    "Header",
    "HeaderConverter",
    "HeaderRawForm",
    "OffsetReader",
    "Password",
    "PollResult",
    "Predicate",
    "RawConversion",
    "RawForm",
    "RetriableError",
    "Schema",
    "SchemaAndValue",
    "SinkConnector",
    "SinkRecord",
    "SinkRecordBatch",
    "SinkTask",
    "SinkTaskContext",
    "SourceConnector",
    "SourceRecord",
    "SourceRecordBatch",
    "SourceTask",
    "SourceTaskContext",
    "TimestampType",
    "TopicPartition",
    "TransactionContext",
    "Transformation",
    "Type",
    "UpstreamKeys",
    "is_password",
    "password_keys",
    "record_factory",
    "validate_config",
]
