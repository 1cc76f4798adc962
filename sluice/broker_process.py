"""The Sluice broker run as a child process of ``sluice up``.

Why a process and not a thread (``EmbeddedBroker``): the broker and the worker are both busy
Python code, and in one process they share one GIL. On a 2-core machine the broker took about
a fifth of the hub's CPU under load (request decoding, log appends, fetch answers) and every
millisecond of it was a millisecond no task could run. As a child it runs on the other core,
and the hub still talks to it only through Kafka clients over the socket.

Lifetime: the child is started with ``multiprocessing``'s *spawn* (a fresh interpreter, no
inherited threads or client state) and sends back its address once listening, or the error
that stopped it. It ignores SIGINT (Ctrl-C reaches the whole process group, and the hub must
still commit its offsets to a running broker while it stops); the parent stops it with
SIGTERM, which runs the broker's clean shutdown. If the parent dies without stopping it
(``kill -9``), the kernel kills the child too (``PR_SET_PDEATHSIG``), exactly as the thread
would have died with the process, so a restarted ``sluice up`` finds the port and the data
directory's lock free.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
from multiprocessing.connection import Connection
from typing import Any

from sluice.errors import BrokerStartFailed

log = logging.getLogger(__name__)

_PR_SET_NAME = 15  # the name top and ps -o comm show
_PR_SET_PDEATHSIG = 1


class BrokerProcess:
    """``start()`` / ``bootstrap`` / ``stop()``, like ``EmbeddedBroker``, in a child process."""

    def __init__(self, config: Any, log_level: str | None = None) -> None:
        """``config`` is a ``broker.config.BrokerConfig`` (pickled to the child)."""
        self.config = config
        self.log_level = log_level
        self.address: tuple[str, int] | None = None
        self.listeners: dict[str, tuple[str, int]] = {}  # name -> advertised, once started
        self._process: multiprocessing.process.BaseProcess | None = None

    @property
    def bootstrap(self) -> str:
        assert self.address is not None, "broker not started"
        host, port = self.address
        return f"{host}:{port}"

    def listener_bootstrap(self, name: str) -> str:
        """``host:port`` of the listener called ``name`` (its bound port when it asked for 0)."""
        host, port = self.listeners[name]
        return f"{host}:{port}"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self, timeout: float = 60.0) -> None:
        context = multiprocessing.get_context("spawn")
        receiver, sender = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_child_main,
            args=(self.config, self.log_level, os.getpid(), sender),
            name="sluice-broker",
            daemon=False,
        )
        self._process.start()
        sender.close()
        try:
            if not receiver.poll(timeout):
                self.stop()
                raise BrokerStartFailed(f"the broker did not start within {timeout:.0f} s")
            kind, payload = receiver.recv()
        except EOFError:
            self._process.join(5)
            raise BrokerStartFailed(
                f"the broker process exited with code {self._process.exitcode}"
            ) from None
        finally:
            receiver.close()
        if kind == "error":
            self._process.join(10)
            raise BrokerStartFailed(payload)
        self.address, self.listeners = payload

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM (the broker's clean shutdown), then SIGKILL if it overstays ``timeout``."""
        process = self._process
        if process is None or process.exitcode is not None:
            return
        process.terminate()
        process.join(timeout)
        if process.exitcode is None:
            log.warning("broker did not stop in time; killing it", extra={"pid": process.pid})
            process.kill()
            process.join(5)


def _child_main(config: Any, log_level: str | None, parent: int, ready: Connection) -> None:
    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from sluice.logs import setup_logging

    setup_logging("INFO", log_level)
    try:
        import uvloop

        run: Any = uvloop.run
    except ImportError:
        import asyncio

        run = asyncio.run
    run(_serve(config, ready))


async def _serve(config: Any, ready: Connection) -> None:
    import asyncio

    from broker.app import Broker

    broker = Broker(config)
    try:
        await broker.start()
    except Exception as exc:
        ready.send(("error", str(exc) or type(exc).__name__))
        ready.close()
        return
    from broker.gc_tuning import freeze_startup_heap

    freeze_startup_heap()  # this process only serves the broker
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    listeners = {item.name: tuple(item.advertised) for item in broker.config.effective_listeners()}
    ready.send(("ready", (tuple(broker.address), listeners)))
    ready.close()
    try:
        await stop.wait()
    finally:
        await broker.stop()


def _die_with_parent(parent: int) -> None:
    """Asks Linux to SIGKILL this process when its parent dies, and names it (no-op
    elsewhere)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        libc.prctl(_PR_SET_NAME, b"sluice-broker", 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
