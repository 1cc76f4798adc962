"""A minimal blocking Kafka wire client built on kio, for tests that need exact control.

Real clients hide what went over the wire (versions, pipelining, acks=0); this one sends the
exact request entity given and decodes the response, so tests can assert on protocol details.
"""

from __future__ import annotations

import io
import socket
import struct
from typing import Any

from kio.serial import entity_reader, entity_writer

from broker.protocol._legacy_schemas import load_response
from tests.fixtures.broker import _recv_exact


class WireClient:
    """One TCP connection; ``call`` = send + receive, or ``send``/``receive`` to pipeline."""

    def __init__(self, host: str, port: int, timeout: float = 10.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self._correlation = 0
        self._pending: list[tuple[int, int, int]] = []  # (correlation, api_key, version)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def encode(self, request: Any, correlation_id: int) -> bytes:
        header_cls = request.__header_schema__
        header = header_cls(
            request_api_key=request.__api_key__,
            request_api_version=request.__version__,
            correlation_id=correlation_id,
            client_id="wire-test",
        )
        buf = io.BytesIO()
        entity_writer(header_cls)(buf, header)
        entity_writer(type(request))(buf, request)
        payload = buf.getvalue()
        return struct.pack(">i", len(payload)) + payload

    def send(self, request: Any, expect_response: bool = True) -> int:
        self._correlation += 1
        self.sock.sendall(self.encode(request, self._correlation))
        if expect_response:
            self._pending.append((self._correlation, request.__api_key__, request.__version__))
        return self._correlation

    def send_raw(self, frame: bytes) -> None:
        self.sock.sendall(frame)

    def receive(self) -> tuple[int, Any]:
        """The next response: (correlation id, decoded entity)."""
        _, api_key, version = self._pending.pop(0)
        (size,) = struct.unpack(">i", _recv_exact(self.sock, 4))
        body = _recv_exact(self.sock, size)
        cls = load_response(api_key, version)
        header, offset = entity_reader(cls.__header_schema__)(body, 0)
        response, _ = entity_reader(cls)(body, offset)
        return header.correlation_id, response

    def call(self, request: Any) -> Any:
        correlation = self.send(request)
        got, response = self.receive()
        assert got == correlation
        return response

    def is_closed_by_peer(self, timeout: float = 5.0) -> bool:
        """True if the broker closed this connection (EOF or reset) within ``timeout``."""
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False
