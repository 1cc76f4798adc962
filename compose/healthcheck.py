#!/usr/bin/env python3
"""Container health probe of the Sluice image (``sluice-healthcheck`` in the Dockerfile).

    sluice-healthcheck http http://127.0.0.1:8083/health   # the hub's GET /health (KIP-1017)
    sluice-healthcheck broker 127.0.0.1:9092               # a broker's ApiVersions round trip

``http`` is healthy on a 200 answer (the hub's ``/health``, Spark's status page). Exit status
0 = healthy, 1 = not (Docker's HEALTHCHECK contract), with one line on stderr
saying why. Standard library only, so the probe costs a fraction of a ``sluice`` start-up (it
runs every few seconds in every container) and works in any image with a Python. The hub's
``/health`` needs no credentials, answers 200 only once the herder has read its internal topics
and resumed its connectors, and 503 while starting; a broker is healthy once it answers
ApiVersions v0 with error code 0, which is what every Kafka client sends first.
"""

from __future__ import annotations

import socket
import struct
import sys
import urllib.error
import urllib.request

TIMEOUT_S = 4.0


def http_healthy(url: str, timeout: float = TIMEOUT_S) -> tuple[bool, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status == 200, f"{url}: HTTP {response.status}"
    except urllib.error.HTTPError as exc:  # 503 starting, 500 unhealthy
        return False, f"{url}: HTTP {exc.code} {exc.read(300).decode(errors='replace')}"
    except (OSError, ValueError) as exc:
        return False, f"{url}: {exc}"


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("connection closed by the broker")
        data += chunk
    return bytes(data)


def broker_healthy(address: str, timeout: float = TIMEOUT_S) -> tuple[bool, str]:
    host, _, port = address.rpartition(":")
    # ApiVersions (key 18) v0: api key, version, correlation id, client id (int16 length + bytes)
    request = struct.pack(">hhih", 18, 0, 7, 6) + b"health"
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as sock:
            sock.sendall(struct.pack(">i", len(request)) + request)
            (size,) = struct.unpack(">i", _recv_exact(sock, 4))
            body = _recv_exact(sock, size)
    except (OSError, ValueError) as exc:
        return False, f"{address}: {exc}"
    correlation_id, error_code = struct.unpack_from(">ih", body)
    if correlation_id != 7 or error_code != 0:
        return False, f"{address}: ApiVersions answered error code {error_code}"
    return True, f"{address}: ApiVersions ok"


def check(kind: str, target: str) -> tuple[bool, str]:
    """(healthy, why) for ``http URL`` or ``broker HOST:PORT``."""
    return http_healthy(target) if kind == "http" else broker_healthy(target)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("http", "broker"):
        print("usage: sluice-healthcheck http URL | broker HOST:PORT", file=sys.stderr)
        return 2
    kind, target = argv
    healthy, reason = check(kind, target)
    if not healthy:
        print(f"unhealthy: {reason}", file=sys.stderr)
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
