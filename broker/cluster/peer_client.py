"""A minimal Kafka-protocol client for broker-to-broker requests (replica Fetch and
OffsetForLeaderEpoch, transaction markers), encoded and decoded with kio like the server side.

The connection speaks the inter-broker listener's protocol (``PeerSecurity``): TLS first if
the listener is SSL/SASL_SSL, then SaslHandshake v1 + SaslAuthenticate v2 with the broker's own
login (PLAIN, or SCRAM with the server's signature checked) before the first request.

One request at a time per connection (the replica fetcher is sequential by design), so there is
no correlation bookkeeping beyond checking the id. Any error closes the connection; the caller
reconnects with backoff.
"""

from __future__ import annotations

import asyncio
import io
import struct
import time
from functools import cache
from typing import Any

from kio.index import load_request_schema, load_response_schema
from kio.schema.errors import ErrorCode
from kio.schema.sasl_authenticate.v2 import request as auth_req
from kio.schema.sasl_handshake.v1 import request as handshake_req
from kio.serial import entity_reader, entity_writer

from broker.security.inter_broker import PLAINTEXT, PeerSecurity
from broker.security.scram_client import ScramClient, ScramClientError

_SIZE = struct.Struct(">i")


@cache
def _codec(api_key: int, version: int) -> tuple[Any, Any, Any, Any]:
    req = load_request_schema(api_key, version)
    resp = load_response_schema(api_key, version)
    return (
        req.__header_schema__,
        entity_writer(req.__header_schema__),
        entity_writer(req),
        (entity_reader(resp.__header_schema__), entity_reader(resp)),
    )


class PeerConnection:
    def __init__(
        self, host: str, port: int, client_id: str, security: PeerSecurity = PLAINTEXT
    ) -> None:
        self.host, self.port = host, port
        self.client_id = client_id
        self.security = security
        self._reauth_at: float | None = None
        """When to log in again (KIP-368: the peer's session lifetime, less a margin)."""
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._correlation = 0

    async def connect(self, timeout: float) -> None:
        context = self.security.ssl_context
        self._reader, self._writer = await asyncio.wait_for(
            asyncio.open_connection(
                self.host, self.port, limit=16 << 20, ssl=context,
                server_hostname=self.host if context is not None else None,
            ),
            timeout,
        )  # fmt: skip
        if self.security.mechanism is not None:
            try:
                await self._authenticate(self.security, timeout)
            except BaseException:
                self.close()
                raise

    async def _authenticate(self, security: PeerSecurity, timeout: float) -> None:
        """SASL login; a refusal raises ConnectionError (the caller retries with backoff). Also
        the re-authentication a peer with ``connections.max.reauth.ms`` expects."""
        self._reauth_at = None  # the login's own requests must not trigger another one
        mechanism = security.mechanism or ""
        answer = await self.request(
            17, 1, handshake_req.SaslHandshakeRequest(mechanism=mechanism), timeout
        )
        if answer.error_code != ErrorCode.none:
            raise ConnectionError(f"peer refused SASL mechanism {mechanism}: {answer.error_code}")
        if mechanism == "PLAIN":
            token = f"\0{security.username}\0{security.password}".encode()
            await self._sasl_round(token, timeout)
            return
        client = ScramClient(mechanism, security.username, security.password)
        try:
            server_first = await self._sasl_round(client.first(), timeout)
            client.verify(await self._sasl_round(client.final(server_first), timeout))
        except (ScramClientError, UnicodeDecodeError, ValueError) as exc:
            raise ConnectionError(f"SCRAM login to the peer failed: {exc}") from None

    async def _sasl_round(self, token: bytes, timeout: float) -> bytes:
        answer = await self.request(
            36, 2, auth_req.SaslAuthenticateRequest(auth_bytes=token), timeout
        )
        if answer.error_code != ErrorCode.none:
            raise ConnectionError(
                f"peer refused the inter-broker login ({answer.error_code.name}); check "
                "the broker's sasl.jaas.config username and password"
            )
        lifetime = answer.session_lifetime.total_seconds()
        if lifetime > 0:  # re-authenticate at 85% of the session, as Kafka's clients do
            self._reauth_at = time.monotonic() + lifetime * 0.85
        return bytes(answer.auth_bytes)

    async def request(self, api_key: int, version: int, body: Any, timeout: float) -> Any:
        """Sends ``body`` (a kio request entity) and returns the decoded response entity."""
        if self._reauth_at is not None and time.monotonic() >= self._reauth_at:
            await self._authenticate(self.security, timeout)
        # Locals: close() may run while this waits (the fetcher drops a long poll on purpose),
        # and the read must then fail as a closed connection, not on a missing attribute.
        reader, writer = self._reader, self._writer
        assert reader is not None and writer is not None
        header_cls, write_header, write_body, (read_header, read_body) = _codec(api_key, version)
        self._correlation += 1
        buf = io.BytesIO()
        write_header(
            buf,
            header_cls(
                request_api_key=api_key,
                request_api_version=version,
                correlation_id=self._correlation,
                client_id=self.client_id,
            ),
        )
        write_body(buf, body)
        payload = buf.getvalue()
        writer.write(_SIZE.pack(len(payload)) + payload)
        # One timeout scope, not wait_for per read: wait_for wraps each read in a task of its
        # own, which the replica fetcher paid twice per fetch (a round per leader append).
        async with asyncio.timeout(timeout):
            await writer.drain()
            head = await reader.readexactly(4)
            (size,) = _SIZE.unpack(head)
            frame = await reader.readexactly(size)
        header, offset = read_header(frame, 0)
        if header.correlation_id != self._correlation:
            raise ConnectionError(f"correlation id {header.correlation_id} != {self._correlation}")
        response, _ = read_body(frame, offset)
        return response

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None
