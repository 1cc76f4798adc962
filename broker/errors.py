"""Broker errors, each mapped to the Kafka protocol error code a client understands.

Tree::

    BrokerError                      (error_code, retriable)
    ├── CorruptRecordError           CORRUPT_MESSAGE: bad CRC, bad magic, truncated batch
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
    └── StorageError                 KAFKA_STORAGE_ERROR: disk full, I/O failure (retriable)

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


class StorageError(BrokerError):
    error_code = ErrorCode.kafka_storage_error
    retriable = True


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
        StorageError,
    )
}


def for_code(code: ErrorCode | int) -> type[BrokerError]:
    """The exception class for a protocol error code (``BrokerError`` if none is specific)."""
    return _BY_CODE.get(ErrorCode(code), BrokerError)
