"""``Filter``: drops every record it is applied to; meant to be guarded by a predicate."""

from __future__ import annotations

from hub.api import Transformation
from hub.transforms._util import R, java_aliases


class Filter(Transformation[R]):
    """With ``predicate=isTombstone`` drops tombstones; with ``negate=true`` keeps only them."""

    name = "Filter"
    aliases = java_aliases("Filter")
    description = "Drop records (combine with a predicate to choose which)."

    def apply(self, record: R) -> R | None:
        return None
