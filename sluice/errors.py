"""Errors of the application layer (the composition root and its supervisors).

Tree::

    SluiceError                 root
    ├── BrokerStartFailed       the broker child process could not start (the message says
    │                           why: its own error, a timeout, or its exit code)
    ├── ClusterUnreachable      ``sluice connect``: no broker of ``bootstrap.servers``
    │                           answered within the probe's few seconds
    └── LocalClusterError       ``sluice cluster``: ZooKeeper is missing or a process did not
                                start (the message says what to do; also a ``RuntimeError``)

Everything a part raises while starting is logged by ``sluice.node`` as "broker failed to
start" or "hub failed to start" and the process exits with status 1; an unreachable cluster is
one line saying so (no traceback: nothing is wrong with the hub).
"""

from __future__ import annotations


class SluiceError(Exception):
    """Root of the application's errors."""


class BrokerStartFailed(SluiceError, RuntimeError):
    """The child could not start the broker (the message says why)."""


class ClusterUnreachable(SluiceError):
    """No broker of the worker's ``bootstrap.servers`` answered (the message says which)."""


class LocalClusterError(SluiceError, RuntimeError):
    """ZooKeeper is missing or a process did not start (the message says what to do)."""
