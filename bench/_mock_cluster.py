"""Host librdkafka's in-memory mock cluster in its own process, as the benchmark's ceiling.

Why a separate process: the mock brokers are C threads inside whichever process creates them.
Hosting them apart from the benchmark client mirrors the Sluice setup (broker in a subprocess,
client in the bench process), so both are measured over the same loopback TCP path with the same
client, and the mock's CPU and memory can be attributed to its own pid.

Why ctypes: ``test.mock.num.brokers`` gives the same mock cluster, but auto-creates every topic
with 4 partitions and the mock implements no CreateTopics API (and reports a controller id that
no broker has, so AdminClient waits forever). The C API ``rd_kafka_mock_topic_create`` creates
topics with an exact partition count; it is called on the very librdkafka build that
confluent-kafka ships, so client and mock are the same code.

Protocol on stdin/stdout (one line each): the process prints ``BOOTSTRAP host:port[,...]`` once,
then answers ``create NAME PARTITIONS`` with ``ok`` or ``error CODE``; EOF or ``quit`` ends it.
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

_RD_KAFKA_PRODUCER = 0


def _load_librdkafka() -> ctypes.CDLL:
    """Load the librdkafka shared object bundled with the installed confluent-kafka wheel."""
    import confluent_kafka

    pkg = Path(confluent_kafka.__file__).resolve().parent
    candidates = sorted((pkg.parent / "confluent_kafka.libs").glob("librdkafka*.so*"))
    if not candidates:
        # A source build links the system librdkafka instead of bundling one.
        candidates = [Path("librdkafka.so.1")]
    lib = ctypes.CDLL(str(candidates[0]))
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_conf_set.restype = ctypes.c_int
    lib.rd_kafka_conf_set.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_size_t,
    ]
    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
    lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_topic_create.restype = ctypes.c_int
    lib.rd_kafka_mock_topic_create.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_int,
    ]
    return lib


def main() -> int:
    """Start a one-broker mock cluster and serve topic-creation commands until stdin closes."""
    lib = _load_librdkafka()
    errstr = ctypes.create_string_buffer(512)
    conf = lib.rd_kafka_conf_new()
    # The hosting handle never connects anywhere; silence its "no bootstrap.servers" notice.
    lib.rd_kafka_conf_set(conf, b"log_level", b"3", errstr, len(errstr))
    rk = lib.rd_kafka_new(_RD_KAFKA_PRODUCER, conf, errstr, len(errstr))
    if not rk:
        print(f"error rd_kafka_new: {errstr.value.decode(errors='replace')}", flush=True)
        return 1
    cluster = lib.rd_kafka_mock_cluster_new(rk, 1)
    if not cluster:
        print("error rd_kafka_mock_cluster_new failed", flush=True)
        return 1
    bootstrap = lib.rd_kafka_mock_cluster_bootstraps(cluster).decode()
    print(f"BOOTSTRAP {bootstrap}", flush=True)
    for line in sys.stdin:
        parts = line.split()
        if not parts or parts[0] == "quit":
            break
        if parts[0] == "create" and len(parts) == 3:
            err = lib.rd_kafka_mock_topic_create(cluster, parts[1].encode(), int(parts[2]), 1)
            print("ok" if err == 0 else f"error {err}", flush=True)
        else:
            print(f"error unknown command {line.strip()!r}", flush=True)
    # Exit without tearing the mock down: the process is ending and destroy can block on
    # connections the benchmark's clients still hold open.
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    # Skip interpreter teardown: librdkafka's mock threads are still running and must not be
    # joined or finalised from Python.
    os._exit(code)
