"""The client side of a SCRAM exchange (RFC 5802), for the broker's own login to its peers.

The server side is ``scram_exchange.py``; this one derives the salted password from the
password the broker's JAAS entry holds and checks the server's signature, so a peer that does
not know the broker's StoredKey/ServerKey is not trusted either.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from broker.errors import ScramClientError as ScramClientError


class ScramClient:
    def __init__(self, mechanism: str, user: str, password: str) -> None:
        self._hash = "sha256" if mechanism == "SCRAM-SHA-256" else "sha512"
        self._user = user.replace("=", "=3D").replace(",", "=2C")
        self._password = password
        self._nonce = secrets.token_urlsafe(24)
        self._first_bare = f"n={self._user},r={self._nonce}"
        self._server_signature = b""

    def first(self) -> bytes:
        return f"n,,{self._first_bare}".encode()

    def final(self, server_first: bytes) -> bytes:
        text = server_first.decode()
        attrs = dict(part.split("=", 1) for part in text.split(",") if "=" in part)
        nonce, salt, iterations = attrs.get("r", ""), attrs.get("s"), attrs.get("i")
        if not nonce.startswith(self._nonce) or salt is None or iterations is None:
            raise ScramClientError("malformed SCRAM server-first message")
        salted = hashlib.pbkdf2_hmac(
            self._hash, self._password.encode(), base64.b64decode(salt), int(iterations)
        )
        client_key = hmac.digest(salted, b"Client Key", self._hash)
        stored_key = hashlib.new(self._hash, client_key).digest()
        without_proof = f"c=biws,r={nonce}"
        auth_message = f"{self._first_bare},{text},{without_proof}".encode()
        signature = hmac.digest(stored_key, auth_message, self._hash)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        server_key = hmac.digest(salted, b"Server Key", self._hash)
        self._server_signature = hmac.digest(server_key, auth_message, self._hash)
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> None:
        text = server_final.decode()
        if not text.startswith("v=") or not hmac.compare_digest(
            base64.b64decode(text[2:]), self._server_signature
        ):
            raise ScramClientError("the server's SCRAM signature does not match")
