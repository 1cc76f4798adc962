"""compose/cluster.yml's ``pipeline`` service as a local process, from exactly its files.

The command line and the pipeline config it mounts run as they are, except what Docker gives
the container: the brokers' addresses become the test broker's, container paths temp
directories, and the standalone Spark cluster (``spark://spark-master:7077``, two more JVMs)
becomes ``local[1]``, with ``--once`` so the streaming query stops after what is there. Its
input is what the ``log-producer`` service writes, in the topic the ``app-logs`` connector
fills; every line must be read.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka import Producer

from tests.compose._compose import load, services
from tests.compose._local import Mapping, localize, produce
from tests.fixtures.broker import BrokerProcess

# A Spark JVM starts (as in tests/spark_pipelines):
# minutes on a busy machine, more than the suite's default 2.
pytestmark = pytest.mark.timeout(600)


@pytest.mark.slow  # a Spark local run (~20 s); its files are checked by default
def test_the_pipeline_service_counts_the_log_topic(broker: BrokerProcess, tmp_path: Path) -> None:
    if shutil.which("java") is None:
        pytest.fail("no Java runtime: Spark needs one (./dev test installs it)")
    all_services = services(load("cluster.yml"))
    pipeline = all_services["pipeline"]
    config = pipeline.host_path("/etc/sluice/pipelines/log_aggregation.json")
    assert config is not None
    topic = json.loads(config.read_text())["input"]["topics"][0]
    topic_here = f"{topic}-{tmp_path.name}"  # the session broker is shared with other tests
    mapping = Mapping({
        **{f"broker-{i}:9092": broker.bootstrap for i in (1, 2, 3)},
        "/var/lib/sluice": str(tmp_path / "pipelines-data"),
        f'"{topic}"': f'"{topic_here}"',
        "spark://spark-master:7077": "local[1]",
        "spark.driver.host=pipeline": "spark.driver.host=127.0.0.1",
        "0.0.0.0": "127.0.0.1",
    })  # fmt: skip
    args = localize(pipeline, mapping, tmp_path)
    assert (
        "local[1]" in args and topic_here in (tmp_path / "etc/pipeline" / config.name).read_text()
    )

    lines = produce(tmp_path / "shop.log", 200)  # what the app-logs connector would publish
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for line in lines:
        producer.produce(topic_here, line.encode())
    assert producer.flush(30) == 0

    done = subprocess.run(
        [sys.executable, "-m", "sluice", *args, "--once", "--conf", "spark.ui.enabled=false"],
        capture_output=True, text=True, timeout=240,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    rows = re.search(r"log_aggregation: (\d+) input rows", done.stdout + done.stderr)
    assert rows is not None and int(rows.group(1)) == len(lines), done.stdout[-2000:]
    assert (tmp_path / "pipelines-data" / "pipelines").is_dir()  # its checkpoints
