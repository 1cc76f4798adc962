from __future__ import annotations

import os

import pytest

from spark_pipelines.runner import CLUSTER_SHUFFLE_PARTITIONS, shuffle_partitions


@pytest.mark.parametrize(
    ("master", "expected"),
    [
        ("local", 1),
        ("local[1]", 1),
        ("local[2]", 2),
        ("local[4, 3]", 4),
        ("local[*]", os.cpu_count() or 1),
        ("local[*,2]", os.cpu_count() or 1),
        ("spark://host:7077", CLUSTER_SHUFFLE_PARTITIONS),
        ("k8s://https://api:6443", CLUSTER_SHUFFLE_PARTITIONS),
        ("local-cluster[2,1,1024]", CLUSTER_SHUFFLE_PARTITIONS),
        ("yarn", CLUSTER_SHUFFLE_PARTITIONS),
    ],
)
def test_shuffle_partitions_follow_a_local_masters_cores(master, expected):
    assert shuffle_partitions(master) == expected


def test_build_session_applies_the_default_unless_overridden():
    pytest.importorskip("pyspark")
    from spark_pipelines import runner

    seen: dict[str, str] = {}

    class Builder:
        def master(self, _m):
            return self

        def appName(self, _n):
            return self

        def config(self, key, value):
            seen[key] = value
            return self

        def getOrCreate(self):
            return None

    # Only the settings are under test: no JVM is started.
    with pytest.MonkeyPatch.context() as mp:
        import pyspark.sql

        mp.setattr(pyspark.sql.SparkSession, "builder", Builder())
        mp.setattr("spark_pipelines.datasource.source.register", lambda _s: None)
        runner.build_session("local[3]")
        assert seen["spark.sql.shuffle.partitions"] == "3"
        runner.build_session("spark://h:7077", extra={"spark.sql.shuffle.partitions": "64"})
        assert seen["spark.sql.shuffle.partitions"] == "64"


def test_cli_conf_options_become_session_settings():
    from spark_pipelines.cli import spark_conf

    assert spark_conf(["spark.sql.shuffle.partitions=16", "k=x=y", "j=1", "j=2"]) == {
        "spark.sql.shuffle.partitions": "16",
        "k": "x=y",
        "j": "2",
    }
    with pytest.raises(ValueError, match="KEY=VALUE"):
        spark_conf(["spark.sql.shuffle.partitions"])
