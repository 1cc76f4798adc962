"""One client connection: read size-prefixed frames, dispatch, write responses in order.

Ordering: Kafka clients pipeline requests and match responses by arrival order as much as by
correlation id (librdkafka treats an out-of-order response as a protocol error). Like Kafka's
network layer, which mutes a channel while its request is being processed, a connection here
handles one request at a time and writes its response before reading the next frame. A
long-poll Fetch therefore delays only its own connection; every connection is its own task.

Unsupported versions: a request for an API version we do not serve (or an API we do not
implement) is answered in its own version with UNSUPPORTED_VERSION (35) wherever the protocol
lets us encode that (``_unsupported``), and the connection stays open; ApiVersions newer than
ours gets the v0 response with UNSUPPORTED_VERSION and our version table (KIP-511), so the
client can retry with a version we know. Only a version no schema describes (newer than kio
knows) cannot be answered: the connection closes, with at most one WARNING per api key and
version a minute.

Failure policy: anything else malformed (bad size, a body kio cannot decode, a handler bug)
closes *this* connection after a WARNING naming the peer and what was wrong. Those lines are
rate-limited (``client_errors``): the first of each kind per minute in full, the rest as one
summary line with counts, so a flood of bad connections costs a few lines, not one each.
Nothing a client sends can stop the server.

Authentication (``broker.security``): on a SASL listener only ApiVersions, SaslHandshake and
SaslAuthenticate are served until the client authenticates, frames are limited to
``sasl.server.max.receive.size`` (512 KiB) meanwhile, and a failed authentication closes the
connection after its error response. After a v0 SaslHandshake the tokens come as bare frames
(Kafka's legacy framing), answered the same way. On a TLS listener with a client certificate
the principal is the certificate's subject.

Reading (bounded memory, see ``limits.py`` and ``_reader.py``): the 4-byte size is read first;
then a declared size above the idle read-ahead (64 KiB) is reserved against
``queued.max.request.bytes`` (waiting, without reading, while there is no room), and only then
is the body read, with a larger read-ahead. Smaller requests reserve nothing: they fit in the
read-ahead every connection may hold anyway, and so metadata, heartbeats and fetches are never
stuck behind a client that stalls in the middle of a large upload. The reservation is released
after the response is written. A connection that waits for its client's bytes longer than
``connections.max.idle.ms`` is closed by the server (``close_idle``); one waiting for a
reservation or for its handler is not idle.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import struct
import time
from functools import cache
from typing import TYPE_CHECKING, Any

from kio.serial import entity_reader, entity_writer

from broker.protocol import registry
from broker.protocol._buffer import ResponseBuffer
from broker.protocol._legacy_schemas import load_request, load_response
from broker.protocol._reader import BODY_READ_AHEAD, IDLE_READ_AHEAD, ClientReader
from broker.protocol._unsupported import error_response, warn_limiter
from broker.protocol._validate import null_in_required_field
from broker.protocol.handlers.api_versions import API_VERSIONS_KEY, unsupported_version_response
from broker.protocol.limits import QueuedBytes
from broker.security.authorizer_rules import CLUSTER_AUTHORIZATION_FAILED, RULES, Checks
from broker.security.principal import ANONYMOUS, KafkaPrincipal
from broker.security.quota import REQUEST_PERCENTAGE
from broker.security.quota_manager import with_throttle
from broker.security.sasl import PRE_AUTH_APIS, SaslFailed
from sluice.throttled_log import ThrottledLog

if TYPE_CHECKING:
    from broker.app import Broker
    from broker.security.listener_security import ListenerSecurity

log = logging.getLogger(__name__)

client_errors = ThrottledLog(log, "client errors")
"""One WARNING per kind of client error a minute, then a summary line (module docstring)."""

_SIZE = struct.Struct(">i")
_HEADER = struct.Struct(">hhi")
_MIN_FRAME = _HEADER.size + 2  # api key, version, correlation id, client id length
_QUOTA_EXEMPT = frozenset({17, 18, 36})  # SASL handshake, ApiVersions, SaslAuthenticate
_MAX_QUEUED = 512  # deferred responses outstanding per connection before reading pauses
# 64 paused reading whenever a follower was late by a few milliseconds on a busy machine
# (librdkafka at linger.ms=0 keeps ~50 acks=all produces in flight at 10k msgs/s), and the
# produces not yet appended then needed a replication round of their own (docs/cluster.md).


@cache
def _request_codec(api_key: int, version: int) -> tuple[Any, Any]:
    cls = load_request(api_key, version)
    return entity_reader(cls.__header_schema__), entity_reader(cls)


@cache
def _response_codec(api_key: int, version: int) -> tuple[Any, Any, Any]:
    cls = load_response(api_key, version)
    header_cls = cls.__header_schema__
    return header_cls, entity_writer(header_cls), entity_writer(cls)


class Connection:
    """Serves one accepted socket until the client leaves, misbehaves or the broker stops."""

    def __init__(
        self,
        broker: Broker,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        queued_bytes: QueuedBytes | None = None,
        security: ListenerSecurity | None = None,
    ) -> None:
        self._broker = broker
        self._reader = reader
        self._writer = writer
        peer = writer.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self._host = peer[0] if isinstance(peer, tuple) else str(peer)
        self._max_size = broker.config.max_request_size
        self._queued = queued_bytes or QueuedBytes(broker.config.queued_request_bytes_limit)
        self._client_reader = reader if isinstance(reader, ClientReader) else None
        self._awaiting_client = True  # reading: idle time counts (see idle_for)
        self._idle_from = time.monotonic()
        self._closed_idle = False
        # Responses waiting to be written in request order behind a Deferred one.
        self._responses: collections.deque[tuple[int, int, int, Any]] = collections.deque()
        self._writer_task: asyncio.Task[None] | None = None
        self._room: asyncio.Future[None] | None = None  # set when the queue is under the cap
        self.principal: KafkaPrincipal = ANONYMOUS
        """Who this connection acts as; the listener's authentication (TLS client certificate,
        SASL) replaces the anonymous default."""
        self.listener = security.listener.name if security is not None else "PLAINTEXT"
        self._sasl = security.new_session(self.peer) if security is not None else None
        self._sasl_max = security.max_receive if security is not None else self._max_size
        if security is not None and security.listener.tls and self._sasl is None:
            from broker.security.tls import certificate_principal

            self.principal = certificate_principal(writer.get_extra_info("ssl_object"))

    def idle_for(self, now: float) -> float:
        """Seconds this connection has been waiting for its client without receiving a byte
        (0 while it waits for a reservation or its handler)."""
        if not self._awaiting_client:
            return 0.0
        last = self._idle_from
        if self._client_reader is not None:
            last = max(last, self._client_reader.last_active)
        return now - last

    def close_idle(self) -> None:
        """Closes the connection for ``connections.max.idle.ms`` (Kafka logs this at DEBUG)."""
        if self._closed_idle:
            return
        self._closed_idle = True
        log.debug("closing idle connection", extra={"peer": self.peer})
        self._writer.close()

    def _waiting_for_client(self, waiting: bool) -> None:
        if waiting:
            self._idle_from = time.monotonic()
        self._awaiting_client = waiting

    def _read_ahead(self, nbytes: int) -> None:
        if self._client_reader is not None:
            self._client_reader.set_read_ahead(nbytes)

    async def run(self) -> None:
        try:
            while await self._serve_one():
                pass
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            log.debug("connection lost", extra={"peer": self.peer, "error": repr(exc)})
        finally:
            task = self._writer_task
            if task is not None:
                if task.done() and not task.cancelled():
                    task.exception()  # a lost connection, already handled: mark it seen
                task.cancel()
            for *_, pending in self._responses:
                if isinstance(pending, asyncio.Task):
                    pending.cancel()
            self._writer.close()

    async def _serve_one(self) -> bool:
        """Reads and answers one request; False when the connection must close."""
        self._waiting_for_client(True)
        try:
            head = await self._reader.readexactly(4)
        except asyncio.IncompleteReadError as exc:
            if exc.partial and not self._closed_idle:
                self._reject("truncated frame size")
            return False
        (size,) = _SIZE.unpack(head)
        sasl = self._sasl
        pending = sasl is not None and not sasl.authenticated
        limit = self._sasl_max if pending else self._max_size
        raw = sasl is not None and sasl.raw_tokens
        if size < (0 if raw else _MIN_FRAME) or size > limit:
            self._reject("frame size out of bounds", size=size, max=limit)
            return False
        # Requests within the read-ahead every connection may hold anyway reserve nothing, so
        # metadata, heartbeats and fetch requests never queue behind large uploads.
        reserved = size if size > IDLE_READ_AHEAD else 0
        queued = self._queued
        if reserved and not queued.try_reserve(reserved):
            self._waiting_for_client(False)  # waiting for room is not idleness
            await queued.reserve(reserved)
            self._waiting_for_client(True)
        try:
            self._read_ahead(BODY_READ_AHEAD)
            try:
                frame = await self._reader.readexactly(size)
            except asyncio.IncompleteReadError:
                if not self._closed_idle:
                    self._reject("truncated frame", size=size)
                return False
            finally:
                self._read_ahead(IDLE_READ_AHEAD)
            self._waiting_for_client(False)
            if raw:
                return await self._raw_token(frame)
            return await self._dispatch(frame)
        finally:
            if reserved:
                queued.release(reserved)

    async def _dispatch(self, frame: bytes) -> bool:
        api_key, version, correlation_id = _HEADER.unpack_from(frame)
        reg = registry.lookup(api_key)
        sasl = self._sasl
        if sasl is not None and not sasl.authenticated and api_key not in PRE_AUTH_APIS:
            self._reject("request before SASL authentication", api_key=api_key)
            return False
        if sasl is not None and api_key not in PRE_AUTH_APIS and sasl.expired(time.monotonic()):
            self._reject("SASL session expired (connections.max.reauth.ms)", api_key=api_key)
            return False
        if reg is None or not reg.min_version <= version <= reg.max_version:
            return await self._unsupported(frame, api_key, version, correlation_id)
        try:
            read_header, read_body = _request_codec(api_key, version)
            header, offset = read_header(frame, 0)
            request, _ = read_body(frame, offset)
        except Exception as exc:
            self._reject("malformed request", api_key=api_key, api_version=version, error=exc)
            return False
        ctx = registry.RequestContext(
            broker=self._broker,
            api_key=api_key,
            api_version=version,
            correlation_id=correlation_id,
            client_id=header.client_id,
            client_host=self._host,
            hung_up=getattr(self._reader, "hung_up", None),
            principal=self.principal,
            listener=self.listener,
            sasl=sasl,
        )
        authorizer = self._broker.authorizer
        if authorizer is not None:
            rule = RULES.get(api_key)
            refused = (
                rule.refusal(authorizer, ctx, request)
                if isinstance(rule, Checks)
                else None
                if rule is not None
                else CLUSTER_AUTHORIZATION_FAILED
            )
            if refused is not None:
                return await self._refuse(frame, api_key, version, correlation_id, refused)
        quotas = self._broker.quotas
        metered = quotas is not None and bool(quotas.quotas) and api_key not in _QUOTA_EXEMPT
        metered_from = time.perf_counter() if metered else 0.0
        stats = self._broker.stats  # metrics on: time every request (broker/metrics/stats.py)
        started = stats.request_started() if stats is not None else 0.0
        try:
            response = await reg.handler(ctx, request)
        except registry.CloseConnection as exc:
            self._reject(str(exc), api_key=api_key, api_version=version)
            return False
        except Exception as exc:
            bad_field = null_in_required_field(request)
            if bad_field is not None:
                self._reject(
                    "malformed request", api_key=api_key, api_version=version,
                    error=f"null {bad_field}: {exc!r}",
                )  # fmt: skip
                return False
            log.exception(
                "handler failed; closing connection",
                extra={"peer": self.peer, "api_key": api_key, "api_version": version},
            )
            return False
        finally:
            if stats is not None:
                stats.request_done(api_key, started)
        throttle = ctx.throttle_ms
        if metered:
            assert quotas is not None
            handler_s = time.perf_counter() - metered_from
            throttle = max(throttle, quotas.record(
                REQUEST_PERCENTAGE, self.principal.name, ctx.client_id or "", handler_s
            ))  # fmt: skip
        if throttle and response is not None and not isinstance(response, registry.Deferred):
            response = with_throttle(response, throttle)
        if response is None:  # e.g. Produce acks=0: the protocol sends nothing back
            return await self._mute(throttle)
        if isinstance(response, registry.Deferred) or self._responses:
            queued = await self._enqueue(api_key, version, correlation_id, response)
            return queued and await self._mute(throttle)
        await self._send(api_key, version, correlation_id, response)
        if sasl is not None and api_key in PRE_AUTH_APIS:
            if sasl.failed:
                return False  # the client has its error; Kafka closes the connection too
            self.principal = sasl.principal
        return await self._mute(throttle)

    async def _mute(self, throttle_ms: int) -> bool:
        """A client over its quota: read nothing more from it for ``throttle_ms`` (Kafka mutes
        the channel), so one that ignores ``throttle_time_ms`` is held to its quota too."""
        if throttle_ms > 0:
            await asyncio.sleep(throttle_ms / 1000)
        return True

    async def _raw_token(self, token: bytes) -> bool:
        """A bare SASL token after a v0 SaslHandshake; a failure just closes (no error
        frame exists in this framing)."""
        assert self._sasl is not None
        try:
            reply = self._sasl.authenticate(token)
        except SaslFailed:
            return False
        self.principal = self._sasl.principal
        self._write([_SIZE.pack(len(reply)) + reply])
        await self._writer.drain()
        return True

    async def _enqueue(
        self, api_key: int, version: int, correlation_id: int, response: Any
    ) -> bool:
        """Queues a (possibly deferred) response behind the ones not written yet; applies
        back-pressure by not reading further while too many are outstanding."""
        if isinstance(response, registry.Deferred):
            response = asyncio.ensure_future(response.awaitable)
        self._responses.append((api_key, version, correlation_id, response))
        if self._writer_task is None or self._writer_task.done():
            self._writer_task = asyncio.get_running_loop().create_task(self._write_queued())
        while len(self._responses) > _MAX_QUEUED and not self._writer_task.done():
            # Resumes as soon as the writer brings the queue back under the cap.
            self._room = asyncio.get_running_loop().create_future()
            await asyncio.wait((self._writer_task, self._room), return_when=asyncio.FIRST_COMPLETED)
        return not (self._writer_task.done() and self._writer_task.exception() is not None)

    async def _write_queued(self) -> None:
        """Writes queued responses in request order as they complete. Every response that is
        ready behind the one awaited goes out in the same write: acks=all produces complete
        together when the high watermark moves, and one send for all of them instead of one
        each saves the replica leader a system call per request (on loopback the sender also
        pays for the receiver's TCP processing)."""
        queue = self._responses
        while queue:
            api_key, version, correlation_id, response = queue[0]
            if isinstance(response, asyncio.Future):
                try:
                    response = await response
                except Exception:
                    log.exception(
                        "deferred handler failed; closing connection",
                        extra={"peer": self.peer, "api_key": api_key, "api_version": version},
                    )
                    self._writer.close()
                    raise
            chunks = self._encode(api_key, version, correlation_id, response)
            queue.popleft()
            while queue:
                api_key, version, correlation_id, response = queue[0]
                if isinstance(response, asyncio.Future):
                    if not response.done() or response.cancelled() or response.exception():
                        break  # not ready, or failing: the loop above awaits and reports it
                    response = response.result()
                chunks.extend(self._encode(api_key, version, correlation_id, response))
                queue.popleft()
            self._write(chunks)
            await self._writer.drain()
            room = self._room
            if room is not None and not room.done() and len(queue) <= _MAX_QUEUED:
                room.set_result(None)

    async def _unsupported(
        self, frame: bytes, api_key: int, version: int, correlation_id: int
    ) -> bool:
        """Answers a version we do not serve with UNSUPPORTED_VERSION; False = must close."""
        if api_key == API_VERSIONS_KEY:
            response: Any = unsupported_version_response()
            version = 0
        else:
            response, reason = error_response(api_key, version, frame)
            if response is None:
                if warn_limiter.allow(api_key, version):
                    self._reject(
                        "unsupported api version", api_key=api_key, api_version=version,
                        why=reason, **warn_limiter.suppressed(api_key, version),
                    )  # fmt: skip
                return False
        log.debug(
            "answered an unsupported api version",
            extra={"peer": self.peer, "api_key": api_key, "api_version": version},
        )
        if self._responses:
            return await self._enqueue(api_key, version, correlation_id, response)
        await self._send(api_key, version, correlation_id, response)
        return True

    async def _refuse(
        self, frame: bytes, api_key: int, version: int, correlation_id: int, code: int
    ) -> bool:
        """Answers a request the authorizer refused whole (``authorizer_rules.Checks``) with
        ``code`` in every error field; False = must close (no field to carry it)."""
        message = f"{self.principal} is not authorized"
        response, reason = error_response(api_key, version, frame, code, message)
        log.debug(
            "request not authorized",
            extra={"peer": self.peer, "principal": str(self.principal), "api_key": api_key},
        )
        if response is None:
            self._reject("not authorized", api_key=api_key, api_version=version, why=reason)
            return False
        if self._responses:
            return await self._enqueue(api_key, version, correlation_id, response)
        await self._send(api_key, version, correlation_id, response)
        return True

    async def _send(self, api_key: int, version: int, correlation_id: int, response: Any) -> None:
        self._write(self._encode(api_key, version, correlation_id, response))
        await self._writer.drain()

    def _write(self, chunks: list[bytes | bytearray | memoryview]) -> None:
        """Hands a response to the transport. A client that hangs up while its request is
        handled closes the transport under us; uvloop then raises RuntimeError on write (the
        stdlib loop only warns), so that case becomes the connection loss it is."""
        if self._writer.transport.is_closing():
            raise ConnectionResetError("the client closed the connection")
        if len(chunks) == 1:
            self._writer.write(chunks[0])  # the common case: one small coalesced buffer
        else:
            self._writer.writelines(chunks)  # record data: no copy

    @staticmethod
    def _encode(
        api_key: int, version: int, correlation_id: int, response: Any
    ) -> list[bytes | bytearray | memoryview]:
        """The response's frame (size prefix, header, body) as chunks to send."""
        header_cls, write_header, write_body = _response_codec(api_key, version)
        buf = ResponseBuffer()
        write_header(buf, header_cls(correlation_id=correlation_id))
        write_body(buf, response)
        return buf.chunks()

    def _reject(self, reason: str, **fields: object) -> None:
        key = reason
        api_key, version = fields.get("api_key"), fields.get("api_version")
        if isinstance(api_key, int) and registry.lookup(api_key) is not None:
            # One line per API and version we refuse: which clients need what is worth
            # seeing; api keys nobody serves (garbage) all share one line.
            key = f"{reason} (api {api_key} v{version})"
        client_errors.event(key, reason + "; closing connection", peer=self.peer, **fields)
