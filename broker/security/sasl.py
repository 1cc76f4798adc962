"""One connection's SASL exchange: SaslHandshake picks a mechanism, then tokens go back and
forth (in SaslAuthenticate requests, or raw frames after a v0 handshake) until the client is
authenticated or refused.

States: ``handshake`` (only ApiVersions and SaslHandshake are served) -> ``authenticate``
(SaslAuthenticate, or one raw token frame for a v0 handshake) -> ``done`` (every API, as the
authenticated principal) or ``failed`` (the connection closes after the error response).
Re-authentication (KIP-368): with ``connections.max.reauth.ms`` a session lasts that long
(SaslAuthenticate tells the client, ``session_lifetime_ms``); an authenticated client may run
SaslHandshake v1 + SaslAuthenticate again on the connection, with the same mechanism and as the
same principal (else it fails and closes), which starts a new session. A request other than
those after the session ended closes the connection, as Kafka does.
Kafka's order, with the same error codes: an unknown mechanism is UNSUPPORTED_SASL_MECHANISM
(33), a request out of order is ILLEGAL_SASL_STATE (34), a bad credential is
SASL_AUTHENTICATION_FAILED (58) with the message "Authentication failed: Invalid username or
password" whatever was wrong, so a client cannot learn which users exist.

PLAIN checks ``authzid\\0user\\0password`` against the listener's JAAS users in constant
time; SCRAM-SHA-256/512 runs RFC 5802's two round trips (``scram_exchange``) against the salted
credentials of the ``ScramStore``.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Mapping

from broker.security.principal import ANONYMOUS, KafkaPrincipal
from broker.security.scram import MECHANISMS as SCRAM_MECHANISMS
from broker.security.scram import ScramCredential, ScramStore
from broker.security.scram_exchange import ScramError, ScramExchange
from sluice.throttled_log import ThrottledLog

log = logging.getLogger(__name__)
failures = ThrottledLog(log, "authentication failures", level=logging.INFO)
"""A client can fail as often as it likes: one line per mechanism a minute, then a count."""

UNSUPPORTED_SASL_MECHANISM = 33
ILLEGAL_SASL_STATE = 34
SASL_AUTHENTICATION_FAILED = 58
FAILED_MESSAGE = "Authentication failed: Invalid username or password"
SUPPORTED = ("PLAIN", *SCRAM_MECHANISMS)
DEFAULT_MAX_RECEIVE = 524_288
"""``sasl.server.max.receive.size``: the largest frame read before authentication."""

PRE_AUTH_APIS = frozenset({17, 18, 36})  # SaslHandshake, ApiVersions, SaslAuthenticate


class SaslFailed(Exception):
    """The exchange failed; ``code`` and ``message`` go to the client, then it is closed."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class SaslSession:
    """The SASL state of one connection (used by the connection loop and the handlers)."""

    def __init__(
        self,
        mechanisms: tuple[str, ...],
        plain_users: Mapping[str, str],
        scram: ScramStore | None,
        peer: str = "",
        reauth_ms: int = 0,
    ) -> None:
        self.mechanisms = mechanisms
        self.reauth_ms = reauth_ms
        self.expires_at: float | None = None
        """``time.monotonic()`` when the session ends (None: never, or not authenticated)."""
        self._reauthenticating = False
        self._plain_users = plain_users
        self._scram = scram
        self.peer = peer
        self.state = "handshake"
        self.raw_tokens = False
        """True after a v0 handshake: the next frames are bare tokens, not Kafka requests."""
        self.mechanism: str | None = None
        self.principal: KafkaPrincipal = ANONYMOUS
        self._scram_server: ScramExchange | None = None

    @property
    def authenticated(self) -> bool:
        """True once logged in, also while a re-authentication runs (the client keeps its
        principal until it ends)."""
        return self.state == "done" or (self._reauthenticating and self.state == "authenticate")

    def expired(self, now: float) -> bool:
        """The session ended and no re-authentication is under way."""
        return self.state == "done" and self.expires_at is not None and now >= self.expires_at

    def lifetime_ms(self, now: float) -> int:
        """What SaslAuthenticate tells the client (0: no limit)."""
        if self.expires_at is None:
            return 0
        return max(1, int((self.expires_at - now) * 1000))

    @property
    def failed(self) -> bool:
        return self.state == "failed"

    def handshake(self, mechanism: str, version: int) -> int:
        """SaslHandshake: 0, or the error code; after an error the connection closes once the
        response (which lists the enabled mechanisms) is written, as Kafka's does."""
        if self.state == "done" and version >= 1 and mechanism == self.mechanism:
            self._reauthenticating = True  # KIP-368: same mechanism, v1 framing only
            self._scram_server = None
            self.state = "authenticate"
            return 0
        if self.state != "handshake":
            self.state = "failed"
            return ILLEGAL_SASL_STATE
        if mechanism not in self.mechanisms:
            self.state = "failed"
            return UNSUPPORTED_SASL_MECHANISM
        self.mechanism = mechanism
        self.state = "authenticate"
        self.raw_tokens = version == 0
        return 0

    def authenticate(self, token: bytes) -> bytes:
        """One client token -> the server's reply token; raises SaslFailed (state failed)."""
        if self.state != "authenticate":
            self.state = "failed"
            raise SaslFailed(ILLEGAL_SASL_STATE, "SaslAuthenticate before SaslHandshake")
        try:
            if self.mechanism == "PLAIN":
                return self._plain(token)
            return self._scram_step(token)
        except SaslFailed:
            self.state = "failed"
            failures.event(
                f"failed {self.mechanism}", "authentication failed", peer=self.peer,
                mechanism=self.mechanism,
            )  # fmt: skip
            raise

    def _done(self, user: str) -> None:
        if self._reauthenticating and user != self.principal.name:
            raise SaslFailed(
                SASL_AUTHENTICATION_FAILED, "Re-authentication must keep the same principal"
            )
        self._reauthenticating = False
        self.state = "done"
        self.raw_tokens = False
        self.principal = KafkaPrincipal("User", user)
        if self.reauth_ms > 0:
            self.expires_at = time.monotonic() + self.reauth_ms / 1000
        log.debug("authenticated", extra={"peer": self.peer, "principal": str(self.principal)})

    def _plain(self, token: bytes) -> bytes:
        parts = token.split(b"\0")
        if len(parts) != 3:
            raise SaslFailed(SASL_AUTHENTICATION_FAILED, "Invalid SASL/PLAIN response")
        try:
            authzid, user, password = (p.decode() for p in parts)
        except UnicodeDecodeError:
            raise SaslFailed(SASL_AUTHENTICATION_FAILED, FAILED_MESSAGE) from None
        if authzid and authzid != user:
            raise SaslFailed(
                SASL_AUTHENTICATION_FAILED, "Authentication failed: authorization id differs"
            )
        expected = self._plain_users.get(user)
        # compare even for an unknown user, so timing does not tell which users exist
        ok = hmac.compare_digest(password.encode(), (expected or "\0" + password).encode())
        if expected is None or not ok:
            raise SaslFailed(SASL_AUTHENTICATION_FAILED, FAILED_MESSAGE)
        self._done(user)
        return b""

    def _scram_step(self, token: bytes) -> bytes:
        mechanism = self.mechanism or ""
        try:
            text = token.decode()
            if self._scram_server is None:
                self._scram_server = ScramExchange(mechanism, self._lookup)
                return self._scram_server.client_first(text).encode()
            reply = self._scram_server.client_final(text).encode()
        except (ScramError, UnicodeDecodeError) as exc:
            log.debug("SCRAM exchange refused", extra={"peer": self.peer, "why": str(exc)})
            raise SaslFailed(SASL_AUTHENTICATION_FAILED, FAILED_MESSAGE) from None
        self._done(self._scram_server.user)
        return reply

    def _lookup(self, user: str) -> ScramCredential | None:
        if self._scram is None or self.mechanism is None:
            return None
        return self._scram.get(user, self.mechanism)
