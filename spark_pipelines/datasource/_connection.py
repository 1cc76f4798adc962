"""A plain TCP connection to one broker, speaking Kafka request/response frames via kio.

Just enough client for the native read path: requests are encoded by kio (header v1 or v2 as
the request's schema says) and sent as one size-prefixed frame; responses come back in request
order (Kafka answers a connection's requests in order) and are decoded by kio from a read-only
view of the received frame (kio refuses writable buffers). No TLS, no SASL: ``_fetch`` uses
this only for plaintext listeners.
"""

from __future__ import annotations

import socket
import struct
from functools import cache
from typing import Any

from kio.index import load_request_schema, load_response_schema
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader, entity_writer

from spark_pipelines.errors import ProtocolError

API_VERSIONS_KEY = 18
_SIZE = struct.Struct(">i")


@cache
def _codec(api_key: int, version: int) -> tuple[Any, Any, Any, Any, Any]:
    request = load_request_schema(api_key, version)
    response = load_response_schema(api_key, version)
    return (
        request,
        entity_writer(request.__header_schema__),
        entity_writer(request),
        entity_reader(response.__header_schema__),
        entity_reader(response),
    )


def request_class(api_key: int, version: int) -> Any:
    """kio's request entity for this API version (nested classes live in its module)."""
    return _codec(api_key, version)[0]


class _Frames:
    """Collects kio's many small writes into one request frame."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.parts.append(bytes(data))


class Connection:
    """One plain TCP connection speaking request/response frames; not thread-safe."""

    def __init__(self, host: str, port: int, client_id: str, timeout: float) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.client_id = client_id
        self._correlation = 0
        self._pending: list[tuple[int, int, int]] = []

    def send(self, api_key: int, version: int, body: Any) -> None:
        request_cls, write_header, write_body, _rh, _rb = _codec(api_key, version)
        self._correlation += 1
        frames = _Frames()
        write_header(
            frames,
            request_cls.__header_schema__(
                request_api_key=api_key,
                request_api_version=version,
                correlation_id=self._correlation,
                client_id=self.client_id,
            ),
        )
        write_body(frames, body)
        payload = b"".join(frames.parts)
        self.sock.sendall(_SIZE.pack(len(payload)) + payload)
        self._pending.append((api_key, version, self._correlation))

    def receive(self) -> Any:
        """The response to the oldest request sent (responses arrive in request order)."""
        api_key, version, correlation = self._pending.pop(0)
        (size,) = _SIZE.unpack(self._read(4))
        frame = memoryview(self._read(size)).toreadonly()  # kio wants read-only buffers
        _rc, _wh, _wb, read_header, read_body = _codec(api_key, version)
        header, at = read_header(frame, 0)
        if header.correlation_id != correlation:
            raise ProtocolError(f"response for {header.correlation_id}, expected {correlation}")
        body, _ = read_body(frame, at)
        return body

    def _read(self, n: int) -> bytearray:
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            k = self.sock.recv_into(view[got:], n - got)
            if k == 0:
                raise ConnectionError("broker closed the connection")
            got += k
        return buf

    def close(self) -> None:
        self.sock.close()


def serves(conn: Connection, api_key: int, version: int) -> bool:
    """Whether the broker's ApiVersions table lists ``version`` of ``api_key``."""
    request_cls = _codec(API_VERSIONS_KEY, 0)[0]
    conn.send(API_VERSIONS_KEY, 0, request_cls())
    answer = conn.receive()
    if answer.error_code != ErrorCode.none:
        return False
    return any(
        k.api_key == api_key and k.min_version <= version <= k.max_version for k in answer.api_keys
    )
