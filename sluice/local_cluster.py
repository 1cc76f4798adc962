"""``sluice up --brokers N``: ZooKeeper plus N brokers on one machine, for watching failover on a
laptop. Not a production deployment (see compose/ for that): everything runs as children of
the ``sluice up`` process and dies with it.

ZooKeeper is Debian's ``zookeeper`` package run as a standalone server (``zoo.cfg`` written
under ``<data dir>/zookeeper``, admin HTTP server off, ``tickTime=500`` so a killed broker is
noticed within the 6 s session timeout the brokers ask for). Brokers are ``BrokerProcess``
children (the same as the single-node ``sluice up`` uses) with ids 1..N on consecutive ports
from ``--broker-port``, data in ``<data dir>/broker-<id>``, replication factor min(3, N) for
new topics, ``__consumer_offsets`` and the hub's internal topics.

Every broker's config is ``base`` (``sluice up``'s: the default listeners and authorizer of
``sluice.hub_login``) with its own id, port and data directory. ``prepare`` runs against the
brokers' ZooKeeper chroot after ZooKeeper is up and before the first broker starts: what must
be in ZooKeeper before any client can connect (the hub's credential and ACLs) is written there.

ZooKeeper authentication: when ``base`` carries a ``zookeeper_digest`` (``sluice up``'s default:
``sluice-hub`` and the hub's password), every client of that ZooKeeper logs in with it, the
chroot is created by ``prepare_chroot`` with a digest ACL granting that identity alone, and every
node below inherits the same ACL (the brokers' ``default_acl``): a local process that reaches
the ZooKeeper port reads and writes nothing under ``/sluice``. A chroot that exists but is not
that identity's (a replaced password file, a cluster made before ZooKeeper authentication, or a
node created by someone else first) stops the start with one line saying what to do.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sluice.errors import LocalClusterError

if TYPE_CHECKING:
    from kazoo.client import KazooClient

    from broker.config import BrokerConfig, ZkDigest

log = logging.getLogger(__name__)

ZK_JAR = Path("/usr/share/java/zookeeper.jar")
ZK_CONF_DIR = Path("/etc/zookeeper/conf_example")
SESSION_TIMEOUT_MS = 6000
CHROOT = "/sluice"


def zookeeper_installed() -> bool:
    return ZK_JAR.exists()


def _srvr(port: int) -> str:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"srvr")
            return sock.recv(4096).decode(errors="replace")
    except OSError:
        return ""


def _die_with_parent() -> None:  # runs in the forked child before exec
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


class ZooKeeperProcess:
    def __init__(self, directory: Path, port: int) -> None:
        self.directory = directory
        self.port = port
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> None:
        if not zookeeper_installed():
            raise LocalClusterError(
                f"{ZK_JAR} not found: install ZooKeeper (apt-get install zookeeper) to run "
                "several brokers, or run `sluice up` without --brokers"
            )
        if _srvr(self.port):
            raise LocalClusterError(f"port {self.port} is in use; pick --zookeeper-port")
        data = self.directory / "data"
        data.mkdir(parents=True, exist_ok=True)
        cfg = self.directory / "zoo.cfg"
        cfg.write_text(
            f"tickTime=500\ndataDir={data}\nclientPort={self.port}\n"
            "clientPortAddress=127.0.0.1\nadmin.enableServer=false\nmaxSessionTimeout=60000\n"
            "4lw.commands.whitelist=srvr,ruok\n"
        )
        out = open(self.directory / "zookeeper.log", "ab")  # noqa: SIM115 - owned by the child
        self.proc = subprocess.Popen(
            ["java", "-Xmx256m", "-cp", f"{ZK_CONF_DIR}:{ZK_JAR}",
             "org.apache.zookeeper.server.ZooKeeperServerMain", str(cfg)],
            stdout=out, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent,
            # its own session: a terminal's Ctrl-C (sent to the whole foreground group) must not
            # stop ZooKeeper under the brokers; ``stop`` ends it after them
            start_new_session=True,
        )  # fmt: skip
        out.close()
        deadline = time.monotonic() + timeout
        while "Mode: standalone" not in _srvr(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise LocalClusterError(
                    f"ZooKeeper did not start; see {self.directory / 'zookeeper.log'}"
                )
            time.sleep(0.1)
        log.info("zookeeper listening", extra={"address": f"127.0.0.1:{self.port}"})

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def _kazoo(hosts: str, digest: ZkDigest | None) -> Iterator[KazooClient]:
    from kazoo.client import KazooClient

    # (importing zk_client also keeps kazoo's debug line with the password out of the logs)
    from broker.cluster.zk_client import digest_auth

    # kazoo logs every connect and close at INFO; the brokers' own lines say what matters
    logging.getLogger("kazoo.client").setLevel(logging.WARNING)
    zk = KazooClient(hosts=hosts, timeout=SESSION_TIMEOUT_MS / 1000, **digest_auth(digest))
    zk.start(timeout=30)
    try:
        yield zk
    finally:
        zk.stop()
        zk.close()


def prepare_chroot(
    hosts: str, chroot: str, digest: ZkDigest | None,
    prepare: Callable[[KazooClient], None] | None, data_dir: Path,
) -> None:  # fmt: skip
    """Creates ``chroot`` (as a broker would: a chrooted client cannot create its own root)
    and runs ``prepare`` on a client inside it. With ``digest`` both clients log in with it,
    the chroot is created with its ACL, and an existing chroot must carry exactly that ACL;
    otherwise LocalClusterError says what to do (``data_dir``: the cluster's, for the
    message)."""
    from kazoo.exceptions import NoAuthError
    from kazoo.security import make_digest_acl

    try:
        with _kazoo(hosts, digest) as bare:
            bare.ensure_path(chroot)
            owned = True
            if digest is not None:
                acls, _ = bare.get_acls(chroot)
                owned = acls == [make_digest_acl(digest.username, digest.password, all=True)]
        if owned and prepare is not None:
            with _kazoo(hosts + chroot, digest) as zk:
                prepare(zk)
    except NoAuthError:
        owned = False
    if not owned:
        raise LocalClusterError(_not_ours(chroot, digest, data_dir))


def _not_ours(chroot: str, digest: ZkDigest | None, data_dir: Path) -> str:
    from sluice.hub_login import PASSWORD_FILE

    user = digest.username if digest is not None else "anonymous"
    return (
        f"ZooKeeper's {chroot} does not belong to the {user} login of this cluster (its "
        "password file was replaced, or the cluster was made before ZooKeeper "
        f"authentication): restore {data_dir / PASSWORD_FILE}, or delete "
        f"{data_dir / 'zookeeper'} and {data_dir / 'broker-*'} to start an empty cluster"
    )


class LocalCluster:
    """ZooKeeper and ``brokers`` ``BrokerProcess``es; ``start``/``bootstrap``/``stop`` like one
    broker (see the module docstring for ``base`` and ``prepare``)."""

    def __init__(
        self, data_dir: Path, host: str, first_port: int, brokers: int, zk_port: int,
        log_level: str | None, *, base: BrokerConfig | None = None,
        prepare: Callable[[KazooClient], None] | None = None,
    ) -> None:  # fmt: skip
        self.data_dir = data_dir
        self.host = host
        self.first_port = first_port
        self.size = brokers
        self.zookeeper = ZooKeeperProcess(data_dir / "zookeeper", zk_port)
        self.log_level = log_level
        self.base = base
        self.prepare = prepare
        self.brokers: list[Any] = []

    @property
    def replication_factor(self) -> int:
        return min(3, self.size)

    @property
    def bootstrap(self) -> str:
        """Every broker's first listener (the users')."""
        return ",".join(b.bootstrap for b in self.brokers)

    def listener_bootstrap(self, name: str) -> str:
        """Every broker's listener called ``name``, at its bound port."""
        return ",".join(b.listener_bootstrap(name) for b in self.brokers)

    def start(self) -> None:
        from broker.config import BrokerConfig
        from sluice.broker_process import BrokerProcess

        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.zookeeper.start()
        rf = self.replication_factor
        base = self.base if self.base is not None else BrokerConfig()
        try:
            if self.prepare is not None or base.zookeeper_digest is not None:
                prepare_chroot(f"127.0.0.1:{self.zookeeper.port}", CHROOT,
                               base.zookeeper_digest, self.prepare, self.data_dir)  # fmt: skip
            for i in range(1, self.size + 1):
                config = replace(
                    base,
                    data_dir=self.data_dir / f"broker-{i}",
                    host=self.host,
                    port=self.first_port + i - 1 if self.first_port else 0,
                    node_id=i,
                    zookeeper_connect=f"127.0.0.1:{self.zookeeper.port}{CHROOT}",
                    zookeeper_session_timeout_ms=SESSION_TIMEOUT_MS,
                    default_replication_factor=rf,
                    offsets_topic_replication_factor=rf,
                    group_initial_rebalance_delay_ms=0,
                )
                broker = BrokerProcess(config, self.log_level)
                broker.start()
                self.brokers.append(broker)
        except Exception:
            self.stop()
            raise
        log.info("local cluster up", extra={"brokers": self.bootstrap, "pid": os.getpid()})

    def stop(self) -> None:
        for broker in reversed(self.brokers):
            broker.stop()
        self.brokers = []
        self.zookeeper.stop()
