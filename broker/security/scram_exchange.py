"""The server side of one SCRAM exchange (RFC 5802), with Kafka's nonce rule.

Two rounds: client-first (``n,,n=<user>,r=<client nonce>``) -> server-first
(``r=<client nonce><server nonce>,s=<salt>,i=<iterations>``); client-final
(``c=biws,r=<nonce>,p=<proof>``) -> server-final (``v=<server signature>``). The proof is
checked against StoredKey only (``H(proof XOR HMAC(StoredKey, AuthMessage)) == StoredKey``), so
the broker never needs the password.

Kafka's ``ScramSaslServer`` accepts a client-final nonce that *ends with* the combined nonce
rather than equal to it, and librdkafka 2.0 relies on that (it sends the client nonce twice);
this follows Kafka, which is why the exchange is ours (the tests check it against ``scramp``'s
client) rather than a library's stricter one.
The server nonce is random alphanumeric, as Kafka's.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Callable

from broker.errors import ScramError as ScramError
from broker.security.scram import ScramCredential


def _attributes(message: str) -> list[tuple[str, str]]:
    out = []
    for part in message.split(","):
        key, sep, value = part.partition("=")
        if not sep or len(key) != 1:
            raise ScramError(f"malformed SCRAM attribute {key[:10]!r}")
        out.append((key, value))
    return out


def _saslname(text: str) -> str:
    """RFC 5802's escaping of ',' and '=' in user names."""
    return text.replace("=2C", ",").replace("=3D", "=")


class ScramExchange:
    """One connection's SCRAM state; ``lookup(user)`` returns the user's credential."""

    def __init__(self, mechanism: str, lookup: Callable[[str], ScramCredential | None]) -> None:
        self._hash = "sha256" if mechanism == "SCRAM-SHA-256" else "sha512"
        self._lookup = lookup
        self.user = ""
        self._cred: ScramCredential | None = None
        self._first_bare = ""
        self._server_first = ""
        self._nonce = ""

    def client_first(self, message: str) -> str:
        """client-first -> server-first; raises ScramError (unknown user included)."""
        gs2, sep, bare = message.partition(",,")
        if not sep or gs2 not in ("n", "y"):
            raise ScramError("channel binding and authorization ids are not supported")
        attrs = dict(_attributes(bare))
        if "n" not in attrs or "r" not in attrs or not attrs["r"]:
            raise ScramError("client-first-message lacks n or r")
        self.user = _saslname(attrs["n"])
        self._cred = self._lookup(self.user)
        if self._cred is None:
            raise ScramError("unknown user")
        self._first_bare = bare
        self._nonce = attrs["r"] + secrets.token_hex(16)
        salt = base64.b64encode(self._cred.salt).decode()
        self._server_first = f"r={self._nonce},s={salt},i={self._cred.iterations}"
        return self._server_first

    def client_final(self, message: str) -> str:
        """client-final -> server-final; raises ScramError on a wrong proof or nonce."""
        cred = self._cred
        if cred is None:
            raise ScramError("client-final-message before client-first-message")
        without_proof, sep, proof_b64 = message.rpartition(",p=")
        if not sep:
            raise ScramError("client-final-message lacks p")
        attrs = dict(_attributes(without_proof))
        if not attrs.get("r", "").endswith(self._nonce):  # Kafka's rule (module docstring)
            raise ScramError("nonce mismatch")
        auth_message = f"{self._first_bare},{self._server_first},{without_proof}".encode()
        try:
            proof = base64.b64decode(proof_b64, validate=True)
        except ValueError:
            raise ScramError("malformed proof") from None
        signature = hmac.new(cred.stored_key, auth_message, self._hash).digest()
        if len(proof) != len(signature):
            raise ScramError("wrong proof")
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        if not hmac.compare_digest(hashlib.new(self._hash, client_key).digest(), cred.stored_key):
            raise ScramError("wrong proof")
        server_signature = hmac.new(cred.server_key, auth_message, self._hash).digest()
        return "v=" + base64.b64encode(server_signature).decode()
