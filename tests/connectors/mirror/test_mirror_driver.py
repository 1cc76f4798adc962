"""``sluice mirror --config mm2.properties`` driving a pair of real brokers, killed with -9
mid-stream: nothing is lost (what follows the last committed offset is sent again, in order),
and after a clean stop and start nothing is sent twice."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path

from tests.connectors.mirror.conftest import (
    MirrorProcess,
    Names,
    counts,
    create_topic,
    produce,
    read_all,
    record,
    topics,
)
from tests.fixtures.broker import BrokerProcess, wait_until


def write_config(path: Path, names: Names, a: BrokerProcess, b: BrokerProcess) -> Path:
    src, dst = names.source, names.target
    path.write_text(f"""
clusters = {src}, {dst}
{src}.bootstrap.servers = {a.bootstrap}
{dst}.bootstrap.servers = {b.bootstrap}
{src}->{dst}.enabled = true
{src}->{dst}.topics = {names.prefix}.*
replication.factor = 1
offset-syncs.topic.replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
refresh.topics.interval.seconds = 1
{dst}.offset.flush.interval.ms = 300
{src}.offset.flush.interval.ms = 300
""")
    return path


def indexes(messages: list[tuple]) -> list[int]:
    return [int(m[1].split(b":")[1]) for m in messages]


def assert_no_loss(source: dict[int, list], target: dict[int, list], upto: int) -> None:
    """Every source record is on the target byte for byte; repeats only as a re-sent run (the
    sequence never jumps forward, it may step back once per restart)."""
    for p, src in source.items():
        seq = indexes(target[p])
        assert set(seq) == set(range(upto)), f"partition {p}: lost {set(range(upto)) - set(seq)}"
        for before, after in itertools.pairwise(seq):
            assert after <= before + 1, f"partition {p} jumped from {before} to {after}"
        for message in target[p]:
            i = int(message[1].split(b":")[1])
            assert message[:4] == src[i][:4]


def test_sluice_mirror_loses_nothing_when_killed(
    cluster_a: BrokerProcess, cluster_b: BrokerProcess, names: Names, tmp_path: Path
) -> None:
    topic, remote = f"{names.prefix}-stream", names.remote(f"{names.prefix}-stream")
    create_topic(cluster_a, topic, 2)
    produce(cluster_a, topic, 2, 0, 200)
    mirror = MirrorProcess(write_config(tmp_path / "mm2.properties", names, cluster_a, cluster_b))
    mirror.start()
    try:
        producer = threading.Thread(target=lambda: [
            produce(cluster_a, topic, 2, i, i + 100) for i in range(200, 3000, 100)
        ])  # fmt: skip
        producer.start()
        wait_until(lambda: min(counts(cluster_b, remote).values() or [0]) > 800, 60,
                   "records mirrored before the kill")  # fmt: skip
        mirror.kill()
        mirror.start()
        producer.join()
        wait_until(lambda: all(set(indexes(m)) == set(range(3000))
                               for m in read_all(cluster_b, remote).values()), 60,
                   "every record after the restart")  # fmt: skip
        assert_no_loss(read_all(cluster_a, topic), read_all(cluster_b, remote), 3000)

        # A clean stop commits what was acknowledged: the next run sends nothing twice.
        before = counts(cluster_b, remote)
        mirror.stop()
        produce(cluster_a, topic, 2, 3000, 3100)
        mirror.start()
        wait_until(lambda: all(set(indexes(m)) == set(range(3100))
                               for m in read_all(cluster_b, remote).values()), 60,
                   "the records produced while stopped")  # fmt: skip
        after = read_all(cluster_b, remote)
        for p in (0, 1):
            assert indexes(after[p][before[p] :]) == list(range(3000, 3100))
            assert after[p][-1][1] == record(p, 3099)["value"]
        # The flow back (heartbeats only) ran too: B's heartbeats reached A's mirror on B.
        assert f"{names.source}.heartbeats" in topics(cluster_b)
    finally:
        mirror.stop()


def test_sluice_mirror_names_a_bad_key(tmp_path: Path) -> None:
    """A mistake in the file stops the command with exit code 2 and the key's name."""
    import subprocess
    import sys

    from tests.fixtures._process import REPO

    path = tmp_path / "mm2.properties"
    path.write_text("clusters = A, B\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\n"
                    "A->B.enabled = true\nreplication.factr = 1\n")  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "sluice", "mirror", "--config", str(path)],
                          cwd=REPO, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2
    assert "replication.factr" in done.stderr
