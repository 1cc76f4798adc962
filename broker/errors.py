"""Broker errors, each mapped to the Kafka protocol error code a client understands.

Tree::

    BrokerError                      (error_code, retriable)
    ├── CorruptRecordError           CORRUPT_MESSAGE: bad CRC, bad magic, truncated batch,
    │                                records a codec cannot decompress
    ├── InvalidRecordError           INVALID_RECORD: well-formed but unacceptable batch
    ├── RecordTooLargeError          MESSAGE_TOO_LARGE
    ├── OffsetOutOfRangeError        OFFSET_OUT_OF_RANGE
    ├── UnknownTopicOrPartitionError UNKNOWN_TOPIC_OR_PARTITION
    ├── TopicAlreadyExistsError      TOPIC_ALREADY_EXISTS
    ├── InvalidTopicError            INVALID_TOPIC_EXCEPTION
    ├── InvalidPartitionsError       INVALID_PARTITIONS
    ├── InvalidConfigError           INVALID_CONFIG
    ├── DuplicateSequenceError       DUPLICATE_SEQUENCE_NUMBER
    ├── OutOfOrderSequenceError      OUT_OF_ORDER_SEQUENCE_NUMBER
    ├── InvalidProducerEpochError    INVALID_PRODUCER_EPOCH
    ├── UnknownProducerIdError       UNKNOWN_PRODUCER_ID
    ├── TransactionCoordinatorFencedError TRANSACTION_COORDINATOR_FENCED: a marker from an
    │                                older coordinator epoch than one already seen
    ├── InvalidReplicationFactorError INVALID_REPLICATION_FACTOR
    ├── NotLeaderOrFollowerError     NOT_LEADER_OR_FOLLOWER: another broker leads (retriable)
    ├── NotEnoughReplicasError       NOT_ENOUGH_REPLICAS: ISR below min.insync.replicas
    ├── FencedLeaderEpochError       FENCED_LEADER_EPOCH: the request's epoch is older
    ├── UnknownLeaderEpochError      UNKNOWN_LEADER_EPOCH: the request's epoch is newer
    ├── InvalidTimestampError        INVALID_TIMESTAMP
    ├── UnsupportedCompressionTypeError UNSUPPORTED_COMPRESSION_TYPE: zstd for old clients,
    │                                a codec whose library is missing
    ├── StorageError                 KAFKA_STORAGE_ERROR: disk full, I/O failure (retriable)
    │   └── SegmentGoneError         a segment deleted or replaced while a reader held it
    │                                (retriable: the retry sees the current segments)
    ├── TopicAuthorizationFailedError TOPIC_AUTHORIZATION_FAILED: the ACLs refuse it
    ├── ClusterAuthorizationFailedError CLUSTER_AUTHORIZATION_FAILED: the ACLs refuse it
    ├── AclError                     INVALID_REQUEST: an ACL or filter Kafka would refuse
    ├── QuotaError                   INVALID_REQUEST: a quota entity or config Kafka would refuse
    ├── ScramError                   SASL_AUTHENTICATION_FAILED: a client's SCRAM exchange
    │                                (malformed message, unknown user, wrong proof)
    ├── ScramClientError             SASL_AUTHENTICATION_FAILED: a peer broker's answer to
    │                                this broker's own SCRAM exchange
    └── settings refused at start-up (never sent to a client; the message names the key):
        ├── PropertiesError          server.properties: unknown, malformed, or a missing feature
        ├── ListenerError            listeners / advertised.listeners / the security protocol map
        ├── JaasError                a sasl.jaas.config entry (the message never has a value)
        ├── TlsConfigError           an ssl.* setting missing, refused or unreadable
        └── InsecureListenerError    unauthenticated listeners beyond loopback without the opt-in

Every class below the root that is not about a protocol code is also a ``ValueError``: callers
that validate input catch ``ValueError``, and did before these classes moved here.

``for_code(code)`` returns the class for a protocol error code, so a handler can turn any
``BrokerError`` into a response field and a test can assert on the code a client will see.
"""

from __future__ import annotations

from kio.schema.errors import ErrorCode


class BrokerError(Exception):
    """Base of every error the broker reports to a client."""

    error_code: ErrorCode = ErrorCode.unknown_server_error
    retriable: bool = False


class CorruptRecordError(BrokerError):
    error_code = ErrorCode.corrupt_message
    retriable = True  # Kafka treats CORRUPT_MESSAGE as retriable: the producer resends.


class UnsupportedCompressionTypeError(BrokerError):
    """A batch's codec cannot be decoded here (its library is not installed, or the codec id
    is unknown). The message names the codec."""

    error_code = ErrorCode.unsupported_compression_type


class InvalidRecordError(BrokerError):
    error_code = ErrorCode.invalid_record


class RecordTooLargeError(BrokerError):
    error_code = ErrorCode.message_too_large


class OffsetOutOfRangeError(BrokerError):
    error_code = ErrorCode.offset_out_of_range


class UnknownTopicOrPartitionError(BrokerError):
    error_code = ErrorCode.unknown_topic_or_partition
    retriable = True


class TopicAlreadyExistsError(BrokerError):
    error_code = ErrorCode.topic_already_exists


class InvalidTopicError(BrokerError):
    error_code = ErrorCode.invalid_topic_exception


class InvalidPartitionsError(BrokerError):
    error_code = ErrorCode.invalid_partitions


class InvalidConfigError(BrokerError):
    error_code = ErrorCode.invalid_config


class DuplicateSequenceError(BrokerError):
    error_code = ErrorCode.duplicate_sequence_number


class OutOfOrderSequenceError(BrokerError):
    error_code = ErrorCode.out_of_order_sequence_number


class InvalidProducerEpochError(BrokerError):
    error_code = ErrorCode.invalid_producer_epoch


class UnknownProducerIdError(BrokerError):
    error_code = ErrorCode.unknown_producer_id


class TransactionCoordinatorFencedError(BrokerError):
    error_code = ErrorCode.transaction_coordinator_fenced


class InvalidReplicationFactorError(BrokerError):
    error_code = ErrorCode.invalid_replication_factor


class NotLeaderOrFollowerError(BrokerError):
    error_code = ErrorCode.not_leader_or_follower
    retriable = True


class NotEnoughReplicasError(BrokerError):
    error_code = ErrorCode.not_enough_replicas
    retriable = True


class FencedLeaderEpochError(BrokerError):
    error_code = ErrorCode.fenced_leader_epoch
    retriable = True


class UnknownLeaderEpochError(BrokerError):
    error_code = ErrorCode.unknown_leader_epoch
    retriable = True


class InvalidTimestampError(BrokerError):
    error_code = ErrorCode.invalid_timestamp


class StorageError(BrokerError):
    error_code = ErrorCode.kafka_storage_error
    retriable = True


class TopicAuthorizationFailedError(BrokerError):
    error_code = ErrorCode.topic_authorization_failed


class ClusterAuthorizationFailedError(BrokerError):
    error_code = ErrorCode.cluster_authorization_failed


class SegmentGoneError(StorageError):
    """The segment was deleted or replaced and its descriptor is no longer open."""

    retriable = True


class AclError(BrokerError, ValueError):
    """An ACL or filter that Kafka would refuse (INVALID_REQUEST with this message)."""

    error_code = ErrorCode.invalid_request


class QuotaError(BrokerError, ValueError):
    """An entity or config Kafka would refuse (INVALID_REQUEST with this message)."""

    error_code = ErrorCode.invalid_request


class ScramError(BrokerError, ValueError):
    """The exchange failed (malformed message, unknown user or wrong proof)."""

    error_code = ErrorCode.sasl_authentication_failed


class ScramClientError(BrokerError, ValueError):
    """The server's messages are malformed, or its signature is wrong."""

    error_code = ErrorCode.sasl_authentication_failed


class PropertiesError(BrokerError, ValueError):
    """A broker property is unknown, malformed or names a feature this broker lacks."""


class ListenerError(BrokerError, ValueError):
    """A listener setting is malformed or inconsistent (names the key)."""


class JaasError(BrokerError, ValueError):
    """The text is not one JAAS login-module entry (the message never contains a value)."""


class TlsConfigError(BrokerError, ValueError):
    """A TLS setting is missing, refused or unreadable (the message names the key)."""


class InsecureListenerError(BrokerError, ValueError):
    """The broker would accept unauthenticated clients from other machines."""


_BY_CODE: dict[ErrorCode, type[BrokerError]] = {
    cls.error_code: cls
    for cls in (
        CorruptRecordError,
        InvalidRecordError,
        RecordTooLargeError,
        OffsetOutOfRangeError,
        UnknownTopicOrPartitionError,
        TopicAlreadyExistsError,
        InvalidTopicError,
        InvalidPartitionsError,
        InvalidConfigError,
        DuplicateSequenceError,
        OutOfOrderSequenceError,
        InvalidProducerEpochError,
        UnknownProducerIdError,
        TransactionCoordinatorFencedError,
        InvalidReplicationFactorError,
        NotLeaderOrFollowerError,
        NotEnoughReplicasError,
        FencedLeaderEpochError,
        UnknownLeaderEpochError,
        InvalidTimestampError,
        UnsupportedCompressionTypeError,
        StorageError,
        TopicAuthorizationFailedError,
        ClusterAuthorizationFailedError,
    )
}


def for_code(code: ErrorCode | int) -> type[BrokerError]:
    """The exception class for a protocol error code (``BrokerError`` if none is specific)."""
    return _BY_CODE.get(ErrorCode(code), BrokerError)
