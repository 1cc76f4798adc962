"""``GET /``: which Sluice serves this API and which Kafka cluster its worker uses.

``commit`` comes from ``SLUICE_COMMIT`` (set by builds) because an installed package has no git
checkout to ask.
"""

from __future__ import annotations

import os
from typing import Any

from fastapi import APIRouter

from hub.rest._deps import HerderDep
from hub.rest.models import ERRORS, ServerInfo, documented
from sluice import __version__

router = APIRouter(tags=["worker"])


@router.get(
    "/",
    summary="Worker version and Kafka cluster id",
    response_model=None,
    responses={200: documented(ServerInfo, "Version, commit and cluster id."), **ERRORS},
)
def server_info(herder: HerderDep) -> dict[str, Any]:
    return {
        "version": __version__,
        "commit": os.environ.get("SLUICE_COMMIT", "unknown"),
        "kafka_cluster_id": herder.kafka_cluster_id(),
    }
