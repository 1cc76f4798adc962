"""One client connection: read size-prefixed frames, dispatch, write responses in order.

Ordering: Kafka clients pipeline requests and match responses by arrival order as much as by
correlation id (librdkafka treats an out-of-order response as a protocol error). Like Kafka's
network layer, which mutes a channel while its request is being processed, a connection here
handles one request at a time and writes its response before reading the next frame. A
long-poll Fetch therefore delays only its own connection; every connection is its own task.

Failure policy: anything malformed (bad size, unknown api key, unsupported version, a body kio
cannot decode, a handler bug) closes *this* connection after one WARNING line naming the peer
and what was wrong. Nothing a client sends can stop the server. The one exception to closing
is ApiVersions newer than we support, which the protocol answers with a v0 response carrying
UNSUPPORTED_VERSION and our version table, so the client can retry with a version we know.
"""

from __future__ import annotations

import asyncio
import logging
import struct
from functools import cache
from typing import TYPE_CHECKING, Any

from kio.index import load_request_schema, load_response_schema
from kio.serial import entity_reader, entity_writer

from broker.protocol import registry
from broker.protocol._buffer import ResponseBuffer
from broker.protocol._validate import null_in_required_field
from broker.protocol.handlers.api_versions import API_VERSIONS_KEY, unsupported_version_response

if TYPE_CHECKING:
    from broker.app import Broker

log = logging.getLogger(__name__)

_SIZE = struct.Struct(">i")
_HEADER = struct.Struct(">hhi")
_MIN_FRAME = _HEADER.size + 2  # api key, version, correlation id, client id length


@cache
def _request_codec(api_key: int, version: int) -> tuple[Any, Any]:
    cls = load_request_schema(api_key, version)
    return entity_reader(cls.__header_schema__), entity_reader(cls)


@cache
def _response_codec(api_key: int, version: int) -> tuple[Any, Any, Any]:
    cls = load_response_schema(api_key, version)
    header_cls = cls.__header_schema__
    return header_cls, entity_writer(header_cls), entity_writer(cls)


class Connection:
    """Serves one accepted socket until the client leaves, misbehaves or the broker stops."""

    def __init__(
        self, broker: Broker, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self._broker = broker
        self._reader = reader
        self._writer = writer
        peer = writer.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self._host = peer[0] if isinstance(peer, tuple) else str(peer)
        self._max_size = broker.config.max_request_size

    async def run(self) -> None:
        try:
            while await self._serve_one():
                pass
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            log.debug("connection lost", extra={"peer": self.peer, "error": repr(exc)})
        finally:
            self._writer.close()

    async def _serve_one(self) -> bool:
        """Reads and answers one request; False when the connection must close."""
        try:
            head = await self._reader.readexactly(4)
        except asyncio.IncompleteReadError as exc:
            if exc.partial:
                self._reject("truncated frame size")
            return False
        (size,) = _SIZE.unpack(head)
        if size < _MIN_FRAME or size > self._max_size:
            self._reject("frame size out of bounds", size=size, max=self._max_size)
            return False
        try:
            frame = await self._reader.readexactly(size)
        except asyncio.IncompleteReadError:
            self._reject("truncated frame", size=size)
            return False
        return await self._dispatch(frame)

    async def _dispatch(self, frame: bytes) -> bool:
        api_key, version, correlation_id = _HEADER.unpack_from(frame)
        reg = registry.lookup(api_key)
        if reg is None:
            self._reject("unknown api key", api_key=api_key, api_version=version)
            return False
        if not reg.min_version <= version <= reg.max_version:
            if api_key == API_VERSIONS_KEY and version > reg.max_version:
                await self._send(
                    API_VERSIONS_KEY, 0, correlation_id, unsupported_version_response()
                )
                return True
            self._reject("unsupported api version", api_key=api_key, api_version=version)
            return False
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
        )
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
        if response is None:  # e.g. Produce acks=0: the protocol sends nothing back
            return True
        await self._send(api_key, version, correlation_id, response)
        return True

    async def _send(self, api_key: int, version: int, correlation_id: int, response: Any) -> None:
        header_cls, write_header, write_body = _response_codec(api_key, version)
        buf = ResponseBuffer()
        write_header(buf, header_cls(correlation_id=correlation_id))
        write_body(buf, response)
        chunks = buf.chunks()
        if len(chunks) == 1:
            self._writer.write(chunks[0])  # the common case: one small coalesced buffer
        else:
            self._writer.writelines(chunks)  # record data: no copy
        await self._writer.drain()

    def _reject(self, reason: str, **fields: object) -> None:
        log.warning(reason + "; closing connection", extra={"peer": self.peer, **fields})
