"""SCRAM credentials (RFC 5802/7677): salted, never the password, as Kafka stores them.

A credential is (salt, iterations, StoredKey, ServerKey) per user and mechanism; with those the
broker can check a client's proof and prove itself, but cannot recover the password. Kafka's
text form, used on disk and in ZooKeeper alike, is
``salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>``; a user's document is
``{"version":1,"config":{"SCRAM-SHA-256":"<text>"}}`` under ``/config/users/<user>``.

Stores: :class:`FileScramStore` (single node: ``<data dir>/scram-credentials.json``, mode 0600,
replaced atomically) and ``broker.security.scram_zk.ZkScramStore`` (cluster mode: every broker
reads the same znodes). Both keep a copy in memory, so an authentication never does I/O.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
MECHANISM_TYPES = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
"""Kafka's ``ScramMechanism`` type numbers used by Alter/DescribeUserScramCredentials."""
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384
"""Kafka refuses iterations outside [4096, 16384] (``ScramMechanism.maxIterations``)."""


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def to_text(self) -> str:
        b64 = base64.b64encode
        return (
            f"salt={b64(self.salt).decode()},stored_key={b64(self.stored_key).decode()},"
            f"server_key={b64(self.server_key).decode()},iterations={self.iterations}"
        )

    @classmethod
    def from_text(cls, text: str) -> ScramCredential:
        fields = dict(item.split("=", 1) for item in text.split(","))
        return cls(
            base64.b64decode(fields["salt"]), base64.b64decode(fields["stored_key"]),
            base64.b64decode(fields["server_key"]), int(fields["iterations"]),
        )  # fmt: skip

    @classmethod
    def from_salted_password(
        cls, mechanism: str, salted_password: bytes, salt: bytes, iterations: int
    ) -> ScramCredential:
        """What AlterUserScramCredentials sends (the client salts and hashes the password)."""
        name = _HASHES[mechanism]
        client_key = hmac.new(salted_password, b"Client Key", name).digest()
        server_key = hmac.new(salted_password, b"Server Key", name).digest()
        return cls(salt, hashlib.new(name, client_key).digest(), server_key, iterations)

    @classmethod
    def from_password(
        cls, mechanism: str, password: str, iterations: int = MIN_ITERATIONS
    ) -> ScramCredential:
        """RFC 5802's Hi() (PBKDF2) over a fresh random salt. Passwords are used as given:
        Kafka's clients do not apply SASLprep either."""
        salt = secrets.token_bytes(24)
        salted = hashlib.pbkdf2_hmac(_HASHES[mechanism], password.encode(), salt, iterations)
        return cls.from_salted_password(mechanism, salted, salt, iterations)


UserCredentials = dict[str, dict[str, ScramCredential]]
"""user -> mechanism -> credential."""


class ScramStore(Protocol):
    """Where the broker finds and changes SCRAM credentials."""

    def get(self, user: str, mechanism: str) -> ScramCredential | None: ...

    def users(self) -> UserCredentials: ...

    def alter(
        self, upserts: dict[tuple[str, str], ScramCredential], deletes: set[tuple[str, str]]
    ) -> None: ...


def encode_user(creds: dict[str, ScramCredential]) -> bytes:
    """A user's document (Kafka's ``/config/users/<user>`` layout)."""
    doc = {"version": 1, "config": {m: c.to_text() for m, c in sorted(creds.items())}}
    return json.dumps(doc, separators=(",", ":")).encode()


def decode_user(raw: bytes | None) -> dict[str, ScramCredential]:
    if not raw:
        return {}
    config = json.loads(raw).get("config", {})
    return {m: ScramCredential.from_text(t) for m, t in config.items() if m in MECHANISMS}


class FileScramStore:
    """Single-node store: one JSON file of user documents, rewritten on each change."""

    FILE = "scram-credentials.json"

    def __init__(self, data_dir: Path) -> None:
        self._path = data_dir / self.FILE
        self._lock = threading.Lock()
        self._users: UserCredentials = {}
        if self._path.exists():
            doc = json.loads(self._path.read_text())
            self._users = {u: decode_user(json.dumps(d).encode()) for u, d in doc.items()}

    def get(self, user: str, mechanism: str) -> ScramCredential | None:
        return self._users.get(user, {}).get(mechanism)

    def users(self) -> UserCredentials:
        return {u: dict(c) for u, c in self._users.items()}

    def alter(
        self, upserts: dict[tuple[str, str], ScramCredential], deletes: set[tuple[str, str]]
    ) -> None:
        with self._lock:
            users = self.users()
            for user, mechanism in deletes:
                users.get(user, {}).pop(mechanism, None)
            for (user, mechanism), cred in upserts.items():
                users.setdefault(user, {})[mechanism] = cred
            users = {u: c for u, c in users.items() if c}
            doc = {u: json.loads(encode_user(c)) for u, c in sorted(users.items())}
            tmp = self._path.with_suffix(".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump(doc, f, indent=1)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self._path)
            self._users = users
