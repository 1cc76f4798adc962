"""Resolving the topic a request entry names, by name (older versions) or by id (newer).

Produce v13+ and Fetch v13+ address topics by UUID only; everything else by name. Handlers call
:func:`resolve` with the request's topic entry and get both, so their logic and their response
(which echoes whichever the client used; ``build`` drops the other) do not branch on version.
"""

from __future__ import annotations

import uuid
from typing import Any

from broker.protocol.registry import RequestContext

ZERO_UUID = uuid.UUID(int=0)


def resolve(ctx: RequestContext, entry: Any, name_field: str = "name") -> tuple[str | None, Any]:
    """(topic name, or None if the id is unknown; topic id as sent, or None) for an entry."""
    if hasattr(entry, name_field):
        return getattr(entry, name_field), None
    topic_id = entry.topic_id
    return ctx.broker.topic_name(topic_id), topic_id
