"""``GET /workers``: the workers of this worker's group and what each runs (a Sluice addition).

Answered from this worker's last assignment (every member receives the whole group's map from
the leader), so any worker answers for the group; a standalone worker lists itself. The
console's Workers page reads it.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from hub.rest._deps import HerderDep
from hub.rest.models import ERRORS

router = APIRouter(prefix="/workers", tags=["workers"])


@router.get("", summary="Workers of the group and the connectors and tasks each runs",
            response_model=None, responses={**ERRORS})  # fmt: skip
def get_workers(herder: HerderDep) -> dict[str, Any]:
    view: dict[str, Any] = herder.members()
    return view
