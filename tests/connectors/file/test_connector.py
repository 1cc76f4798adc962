"""Config validation, Kafka Connect compatibility (quickstart configs, aliases), task
splitting and plugin registration of the file connectors; no runtime involved."""

from __future__ import annotations

import pytest

from connectors.file import plugin
from connectors.file.config import FileSinkConfig, FileSourceConfig
from connectors.file.connector import FileSinkConnector, FileSourceConnector
from hub.api import ConfigError, validate_config

QUICKSTART_SOURCE = {
    "connector.class": "FileStreamSource",
    "tasks.max": "1",
    "file": "test.txt",
    "topic": "connect-test",
}
QUICKSTART_SINK = {
    "connector.class": "FileStreamSink",
    "tasks.max": "1",
    "file": "test.sink.txt",
    "topics": "connect-test",
}


class Ctx:
    def request_task_reconfiguration(self) -> None: ...
    def raise_error(self, error: Exception) -> None: ...


def test_plugin_hook_returns_both_connectors():
    assert plugin.sluice_connectors() == [FileSourceConnector, FileSinkConnector]


def test_names_and_kafka_connect_aliases():
    assert FileSourceConnector.name == "file-source"
    assert set(FileSourceConnector.aliases) == {
        "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "FileStreamSource",
    }
    assert FileSinkConnector.name == "file-sink"
    assert "org.apache.kafka.connect.file.FileStreamSinkConnector" in FileSinkConnector.aliases


def test_quickstart_source_config_validates_with_kafka_connect_defaults():
    config = FileSourceConfig.parse(QUICKSTART_SOURCE)
    assert (config.file, config.topic, config.batch_size) == ("test.txt", "connect-test", 2000)
    assert config.read_from == "beginning"
    connector = FileSourceConnector(Ctx())
    connector.start(config)
    (task_config,) = connector.task_configs(1)
    assert task_config["file"] == "test.txt" and task_config["topic"] == "connect-test"
    assert FileSourceConfig.parse(task_config).patterns == ["test.txt"]


def test_quickstart_sink_config_validates():
    config = FileSinkConfig.parse(QUICKSTART_SINK)
    assert (config.file, config.topics, config.format) == ("test.sink.txt", "connect-test", "raw")
    connector = FileSinkConnector(Ctx())
    connector.start(config)
    assert len(connector.task_configs(4)) == 1  # one writer per file


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"topic": None}, "topic"),
        ({"file": None}, "file"),
        ({"topic": "a,b"}, "topic"),
        ({"batch.size": "0"}, "batch.size"),
        ({"batch.size": "many"}, "batch.size"),
        ({"read.from": "middle"}, "read.from"),
        ({"multiline.pattern": "(unclosed"}, "multiline.pattern"),
        ({"encoding": "klingon"}, "encoding"),
        ({"encoding": "utf-16"}, "encoding"),
        ({"poll.interval.ms": "-1"}, "poll.interval.ms"),
    ],
)
def test_source_errors_name_the_field(change, field):
    raw = {k: v for k, v in {**QUICKSTART_SOURCE, **change}.items() if v is not None}
    with pytest.raises(ConfigError) as exc:
        FileSourceConfig.parse(raw)
    assert field in exc.value.errors, exc.value.errors
    assert field in validate_config(FileSourceConfig, raw)


def test_sink_errors_name_the_field():
    with pytest.raises(ConfigError) as exc:
        FileSinkConfig.parse({"file": "x"})
    assert "topics" in exc.value.errors
    with pytest.raises(ConfigError) as exc:
        FileSinkConfig.parse({**QUICKSTART_SINK, "format": "xml"})
    assert "format" in exc.value.errors
    assert FileSinkConnector.validate({"file": "x"}) == {
        "topics": ["Missing required configuration: set 'topics' or 'topics.regex'"]
    }


def test_files_accepts_lists_and_strings():
    base = {"topic": "t"}
    assert FileSourceConfig.parse({**base, "files": ["a", "b"]}).patterns == ["a", "b"]
    assert FileSourceConfig.parse({**base, "files": "a, b"}).patterns == ["a", "b"]
    assert FileSourceConfig.parse({**base, "files": '["a","b"]'}).patterns == ["a", "b"]
    assert FileSourceConfig.parse({**base, "file": "a", "files": "a,c"}).patterns == ["a", "c"]


def test_task_configs_split_globs_over_max_tasks_and_literals_per_file():
    connector = FileSourceConnector(Ctx())
    connector.start(FileSourceConfig.parse({"topic": "t", "file": "/var/log/*.log"}))
    configs = connector.task_configs(3)
    assert [(c["task.index"], c["task.count"]) for c in configs] == [(0, 3), (1, 3), (2, 3)]
    connector.start(FileSourceConfig.parse({"topic": "t", "files": "/a.log,/b.log"}))
    assert len(connector.task_configs(8)) == 2
