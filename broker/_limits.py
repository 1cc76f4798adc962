"""Process resource limits the broker adjusts at start.

``RLIMIT_NOFILE``: a common default soft limit is 1,024 descriptors while the hard limit is
far higher; the soft limit is only a default an unprivileged process may raise up to the hard
one, so the broker does that at start (as Kafka's packaging asks operators to). Segment files
are kept in a bounded cache sized from the resulting limit (``broker.log._handles``), so even
a low hard limit only costs reopening cold segments, never failed requests.
"""

from __future__ import annotations

import logging
import resource

log = logging.getLogger(__name__)


def raise_open_files_limit() -> tuple[int, int]:
    """Raises the soft descriptor limit to the hard limit; returns the new (soft, hard)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    before = soft
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else _nr_open()
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:  # e.g. a hard limit above the kernel's nr_open
            log.warning(
                "could not raise the open files limit",
                extra={"soft": soft, "hard": _show(hard), "error": str(exc)},
            )
    log.info(
        "open files limit",
        extra={"soft": _show(soft), "hard": _show(hard), "soft_before": _show(before)},
    )
    return soft, hard


def _nr_open() -> int:
    try:
        with open("/proc/sys/fs/nr_open") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return 1 << 20


def _show(limit: int) -> str:
    return "unlimited" if limit == resource.RLIM_INFINITY else str(limit)
