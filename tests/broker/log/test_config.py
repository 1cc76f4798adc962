import pytest

from broker.errors import InvalidConfigError
from broker.log.config import TOPIC_CONFIGS, LogConfig


def test_defaults_round_trip_through_topic_configs() -> None:
    cfg = LogConfig()
    assert LogConfig.from_topic_configs(cfg.to_topic_configs()) == cfg
    assert set(cfg.to_topic_configs()) == set(TOPIC_CONFIGS)


def test_overrides_parse_kafka_names() -> None:
    cfg = LogConfig.from_topic_configs(
        {
            "segment.bytes": "1024",
            "cleanup.policy": "compact, delete",
            "min.cleanable.dirty.ratio": "0.1",
        }
    )
    assert cfg.segment_bytes == 1024
    assert cfg.cleanup_policy == "compact,delete"
    assert cfg.compact and cfg.delete
    assert cfg.min_cleanable_dirty_ratio == 0.1


def test_base_config_is_kept_for_unset_keys() -> None:
    base = LogConfig(retention_ms=5)
    assert LogConfig.from_topic_configs({"segment.ms": "7"}, base).retention_ms == 5


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("segment.bytes", "abc"),
        ("segment.bytes", "1"),
        ("retention.ms", "-2"),
        ("cleanup.policy", "shred"),
        ("message.timestamp.type", "Now"),
        ("min.cleanable.dirty.ratio", "1.5"),
        ("flush.messages", "0"),
        ("no.such.config", "1"),
    ],
)
def test_invalid_config_names_the_key(key: str, value: str) -> None:
    with pytest.raises(InvalidConfigError, match=key.replace(".", r"\.")):
        LogConfig.from_topic_configs({key: value})
