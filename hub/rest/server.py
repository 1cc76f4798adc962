"""Serves the REST app with uvicorn on a background thread, for ``sluice up`` and tests.

The socket is bound here, before the thread starts, so "address already in use" surfaces as
an ``OSError`` from ``start()`` in the caller's thread (with the address in the message)
instead of a log line from a dying thread; port 0 picks a free port, readable from ``port``.
uvicorn is given ``log_config=None`` so it keeps Sluice's logging setup instead of installing
its own, and it installs no signal handlers off the main thread, so the caller stays in
charge of Ctrl-C/SIGTERM and calls ``stop()``.
"""

from __future__ import annotations

import errno
import socket
import threading
import time
from typing import Any

import uvicorn

from hub.rest.client_errors import throttle_client_errors

STOP_TIMEOUT_S = 10.0


class RestServer:
    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 8083) -> None:
        self.app = app
        self.host = host.strip("[]")
        self._port = port
        self._sock: socket.socket | None = None
        self._server = uvicorn.Server(
            uvicorn.Config(app, log_config=None, access_log=False, lifespan="off")
        )
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The bound port (the real one when constructed with port 0); valid after start."""
        return self._port

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self, timeout: float = 10.0) -> None:
        """Binds, starts serving, and returns once requests are accepted."""
        throttle_client_errors()
        self._sock = bind_socket(self.host, self._port)
        self._port = int(self._sock.getsockname()[1])
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._sock]},
            name=f"rest-api-{self.port}",
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError(f"the REST API on {self.url} stopped while starting")
            if time.monotonic() > deadline:
                raise TimeoutError(f"the REST API on {self.url} did not start in {timeout:.0f}s")
            time.sleep(0.01)

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Stops accepting, lets in-flight requests finish (up to ``timeout``), closes."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                self._server.force_exit = True
                self._thread.join(timeout)
        if self._sock is not None:
            self._sock.close()

    def __enter__(self) -> RestServer:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket for the API; ``OSError`` with one line saying where and why (and what
    to do when the port is taken), so callers can refuse to start before anything else runs."""
    host = host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        hint = (
            "; another process uses it: stop that one or choose another port (--rest-port, "
            "rest.port)"
            if exc.errno == errno.EADDRINUSE
            else ""
        )
        raise OSError(
            exc.errno, f"cannot serve the REST API on {host}:{port}: {exc.strerror}{hint}"
        ) from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock
