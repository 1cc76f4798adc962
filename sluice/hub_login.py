"""The default security of ``sluice up``'s embedded broker: the hub logs in, everyone else is
anonymous and may not touch the hub's internal topics (docs/security.md, issues 16 and 21).

Why: four records in the config topic create a connector. Without an authorizer any local
process could write them through the loopback PLAINTEXT listener and so bypass the REST token.
A single embedded broker started without ``--broker-config`` therefore gets:

- a second listener, ``HUB``, SASL_PLAINTEXT with SCRAM-SHA-512 on ``127.0.0.1`` (any free
  port), for the hub's own clients only; the users' PLAINTEXT listener stays as it is, so every
  Kafka client works with no settings (as ``User:ANONYMOUS``);
- the user ``sluice-hub``, whose random password is kept in ``<data dir>/hub-broker.password``
  (mode 0600, like ``hub.token``) and never printed; its SCRAM credential is written to the
  broker's store before the broker starts;
- Kafka's authorizer with ``allow.everyone.if.no.acl.found=true`` and ``super.users=User:
  sluice-hub``; the worker then reserves its internal topics to itself
  (``hub.runtime.internal_acls``);
- CLUSTER ACLs written before the broker starts, allowing everyone what ordinary clients ask of
  the cluster (CREATE, DESCRIBE, DESCRIBE_CONFIGS, IDEMPOTENT_WRITE). An ACL on a resource
  means "only what is granted", so ALTER (CreateAcls, DeleteAcls, SCRAM users), ALTER_CONFIGS
  and CLUSTER_ACTION become the hub's alone; otherwise an anonymous client could simply grant
  itself the internal topics back.

The files are written before the broker takes its data-directory lock: both writes are
idempotent and a second broker on the same directory fails to start anyway.

``sluice up --brokers N`` (``sluice.local_cluster``) gets the same default, with three changes:
the credential and the ACLs live in ZooKeeper (Kafka's layout, which the brokers watch), written
by ``prepare_zookeeper`` once ZooKeeper runs and before the first broker starts; the brokers
replicate over their ``HUB`` listeners logged in as ``sluice-hub`` (``inter_broker_login``),
since over the PLAINTEXT listener they would be ``User:ANONYMOUS`` and the CLUSTER_ACTION a
follower needs would then be every anonymous client's too; and everything that talks to that
ZooKeeper logs in as ``sluice-hub`` with the same password (ZooKeeper's ``digest`` scheme,
``BrokerConfig.zookeeper_digest``) and makes every node its own, so no other local process can
rewrite the ACLs or the credential there.
"""

from __future__ import annotations

import logging
import os
import secrets
import stat
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kazoo.client import KazooClient

    from broker.config import BrokerConfig
    from broker.security.acl import AclBinding
    from broker.security.scram import ScramCredential

log = logging.getLogger(__name__)

HUB_USER = "sluice-hub"
HUB_PRINCIPAL = f"User:{HUB_USER}"
HUB_LISTENER = "HUB"
MECHANISM = "SCRAM-SHA-512"
PASSWORD_FILE = "hub-broker.password"
PASSWORD_BYTES = 32
ANONYMOUS_CLUSTER_OPERATIONS = ("CREATE", "DESCRIBE", "DESCRIBE_CONFIGS", "IDEMPOTENT_WRITE")
"""What every client may do on the cluster: create topics, list groups/describe the cluster,
read broker configs, produce idempotently."""


@dataclass(frozen=True)
class HubLogin:
    """The hub's credential on its broker listener (the password kept out of ``repr``)."""

    username: str
    password: str = field(repr=False)

    def client_settings(self) -> dict[str, str]:
        """librdkafka/worker settings that log in as this user."""
        return {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": MECHANISM,
            "sasl.username": self.username,
            "sasl.password": self.password,
        }


def broker_overrides(broker_host: str | None, cluster: bool = False) -> list[str]:
    """``key=value`` properties for ``build_config``: the users' PLAINTEXT listener first (the
    ``--broker-host``/``--broker-port`` flags move it), the hub's SASL listener on loopback.
    ``cluster``: the brokers replicate over ``HUB`` (their login: ``inter_broker_login``)."""
    host = broker_host or "127.0.0.1"
    inter_broker = [
        f"inter.broker.listener.name={HUB_LISTENER}",
        f"sasl.mechanism.inter.broker.protocol={MECHANISM}",
    ] if cluster else ["inter.broker.listener.name=PLAINTEXT"]  # fmt: skip
    return [
        f"listeners=PLAINTEXT://{host}:9092,{HUB_LISTENER}://127.0.0.1:0",
        f"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,{HUB_LISTENER}:SASL_PLAINTEXT",
        *inter_broker,
        f"listener.name.{HUB_LISTENER.lower()}.sasl.enabled.mechanisms={MECHANISM}",
        "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
        "allow.everyone.if.no.acl.found=true",
        f"super.users={HUB_PRINCIPAL}",
    ]


def inter_broker_login(config: BrokerConfig, login: HubLogin) -> BrokerConfig:
    """``config`` with the brokers' own login on ``HUB`` (``listener.name.hub.scram-sha-512.
    sasl.jaas.config``), added here rather than in ``broker_overrides`` so the password only
    ever sits in ``BrokerConfig.security``, which no ``repr`` or log line shows."""
    key = f"listener.name.{HUB_LISTENER.lower()}.{MECHANISM.lower()}.sasl.jaas.config"
    password = login.password.replace("\\", "\\\\").replace('"', '\\"')  # an edited file
    jaas = (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{login.username}" password="{password}";'
    )
    return replace(config, security={**config.security, key: jaas})


def prepare(data_dir: Path) -> HubLogin:
    """The hub's password (generated on the first start), its SCRAM credential in the broker's
    store and the CLUSTER ACLs in its ACL file, before the broker starts."""
    password = ensure_password(data_dir)
    _store_credential(data_dir, password)
    _seed_cluster_acls(data_dir)
    return HubLogin(HUB_USER, password)


def cluster_login(data_dir: Path) -> HubLogin:
    """``--brokers N``: the password only; the rest goes to ZooKeeper (``prepare_zookeeper``)
    once it runs."""
    return HubLogin(HUB_USER, ensure_password(data_dir))


def cluster_setup(
    config: BrokerConfig, login: HubLogin, reserved: list[AclBinding]
) -> dict[str, Any]:
    """``LocalCluster``'s ``base`` and ``prepare`` for this default: brokers made from
    ``config`` that replicate as the hub and log in to ZooKeeper as the hub (``digest``
    ``sluice-hub:<its password>``, every node theirs alone), and a ZooKeeper that holds the
    hub's credential, the CLUSTER ACLs and ``reserved`` (``reserved_acls``) before the first
    broker starts."""
    from broker.config import ZkDigest

    acls = [*cluster_acls(), *reserved]
    zookeeper = ZkDigest(login.username, login.password)
    return {
        "base": replace(inter_broker_login(config, login), zookeeper_digest=zookeeper),
        "prepare": partial(prepare_zookeeper, login=login, acls=acls),
    }


def prepare_zookeeper(zk: KazooClient, login: HubLogin, acls: list[AclBinding]) -> None:
    """Cluster mode's ``prepare``: the hub's SCRAM credential under ``/config/users`` and
    ``acls`` under ``/kafka-acl*``, in the brokers' chroot before any broker starts. Both are
    idempotent: a restart rewrites nothing that is already there."""
    from broker.security import acl_store_zk, scram_zk
    from broker.security.scram import ScramCredential

    current = scram_zk.read_users(zk).get(login.username, {}).get(MECHANISM)
    if current is None or not _matches(current, login.password):
        fresh = ScramCredential.from_password(MECHANISM, login.password)
        scram_zk.alter_users(zk, {(login.username, MECHANISM): fresh}, set())
    present = set(acl_store_zk.read_all(zk))
    missing = [acl for acl in acls if acl not in present]
    if missing:
        acl_store_zk.apply(zk, missing, [])


def ensure_password(data_dir: Path) -> str:
    """The password in ``<data_dir>/hub-broker.password``, created (0600, ``O_EXCL``) if absent;
    a mode readable by others is tightened."""
    path = data_dir / PASSWORD_FILE
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return _read_password(path)
    password = secrets.token_urlsafe(PASSWORD_BYTES)
    try:
        os.write(fd, (password + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return password


def _read_password(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(f"{path} is not a regular file")
        if mode & 0o077:
            os.fchmod(fd, 0o600)
            log.warning(
                "hub broker password file was readable by other users; now 0600",
                extra={"path": str(path), "was": oct(mode & 0o777)},
            )
        password = os.read(fd, 4096).decode("ascii", "replace").strip()
    finally:
        os.close(fd)
    if not password:
        raise OSError(f"{path} is empty: delete it and restart to generate one")
    return password


def _store_credential(data_dir: Path, password: str) -> None:
    """Writes the hub user's SCRAM credential unless the stored one already matches."""
    from broker.security.scram import FileScramStore, ScramCredential

    store = FileScramStore(data_dir)
    current = store.get(HUB_USER, MECHANISM)
    if current is not None and _matches(current, password):
        return
    store.alter({(HUB_USER, MECHANISM): ScramCredential.from_password(MECHANISM, password)}, set())


def _matches(current: ScramCredential, password: str) -> bool:
    """Whether ``current`` was made from ``password`` (same salt and iterations, same key)."""
    import hashlib
    import hmac

    from broker.security.scram import ScramCredential

    salted = hashlib.pbkdf2_hmac("sha512", password.encode(), current.salt, current.iterations)
    again = ScramCredential.from_salted_password(
        MECHANISM, salted, current.salt, current.iterations
    )
    return hmac.compare_digest(again.stored_key, current.stored_key)


def cluster_acls() -> list[AclBinding]:
    """The CLUSTER ACLs of ``ANONYMOUS_CLUSTER_OPERATIONS`` for ``User:*``."""
    from broker.security.acl import (
        CLUSTER_NAME,
        AclBinding,
        AclOperation,
        PatternType,
        PermissionType,
        ResourceType,
    )

    return [
        AclBinding(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL, "User:*", "*",
                   AclOperation[op], PermissionType.ALLOW)
        for op in ANONYMOUS_CLUSTER_OPERATIONS
    ]  # fmt: skip


def reserved_acls(topics: list[str], group_id: str) -> list[AclBinding]:
    """The hub's ALLOW ALL on its internal topics, group and ``<group.id>-`` transactional ids:
    what ``hub.runtime.internal_acls`` creates at every start, in the broker's own form."""
    from broker.security.acl import (
        AclBinding,
        AclOperation,
        PatternType,
        PermissionType,
        ResourceType,
    )

    def allow(rtype: ResourceType, name: str, pattern: PatternType) -> AclBinding:
        return AclBinding(rtype, name, pattern, HUB_PRINCIPAL, "*", AclOperation.ALL,
                          PermissionType.ALLOW)  # fmt: skip

    out = [allow(ResourceType.TOPIC, topic, PatternType.LITERAL) for topic in topics]
    out.append(allow(ResourceType.GROUP, group_id, PatternType.LITERAL))
    out.append(allow(ResourceType.TRANSACTIONAL_ID, f"{group_id}-", PatternType.PREFIXED))
    return out


def reserve_topics(data_dir: Path, topics: list[str], group_id: str) -> None:
    """Writes ``reserved_acls`` before the broker starts, so that even on the first start no
    anonymous client can create and fill the config topic before the hub reserves it."""
    _seed(data_dir, reserved_acls(topics, group_id))


def _seed_cluster_acls(data_dir: Path) -> None:
    _seed(data_dir, cluster_acls())


def _seed(data_dir: Path, wanted: list[AclBinding]) -> None:
    from broker.security.acl_store import FileAclStore

    store = FileAclStore(data_dir)
    acls = store.load()
    missing = [acl for acl in wanted if acl not in acls]
    if missing:
        store.save([*acls, *missing])
