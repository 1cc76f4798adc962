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
"""

from __future__ import annotations

import logging
import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from broker.security.acl import AclBinding

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


def broker_overrides(broker_host: str | None) -> list[str]:
    """``key=value`` properties for ``build_config``: the users' PLAINTEXT listener first (the
    ``--broker-host``/``--broker-port`` flags move it), the hub's SASL listener on loopback."""
    host = broker_host or "127.0.0.1"
    return [
        f"listeners=PLAINTEXT://{host}:9092,{HUB_LISTENER}://127.0.0.1:0",
        f"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,{HUB_LISTENER}:SASL_PLAINTEXT",
        "inter.broker.listener.name=PLAINTEXT",
        f"listener.name.{HUB_LISTENER.lower()}.sasl.enabled.mechanisms={MECHANISM}",
        "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
        "allow.everyone.if.no.acl.found=true",
        f"super.users={HUB_PRINCIPAL}",
    ]


def prepare(data_dir: Path) -> HubLogin:
    """The hub's password (generated on the first start), its SCRAM credential in the broker's
    store and the CLUSTER ACLs in its ACL file, before the broker starts."""
    password = ensure_password(data_dir)
    _store_credential(data_dir, password)
    _seed_cluster_acls(data_dir)
    return HubLogin(HUB_USER, password)


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
    import hashlib
    import hmac

    from broker.security.scram import FileScramStore, ScramCredential

    store = FileScramStore(data_dir)
    current = store.get(HUB_USER, MECHANISM)
    if current is not None:
        salted = hashlib.pbkdf2_hmac("sha512", password.encode(), current.salt, current.iterations)
        again = ScramCredential.from_salted_password(
            MECHANISM, salted, current.salt, current.iterations
        )
        if hmac.compare_digest(again.stored_key, current.stored_key):
            return
    store.alter({(HUB_USER, MECHANISM): ScramCredential.from_password(MECHANISM, password)}, set())


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
