"""The console's connector throughput: the hub's own ``GET /metrics`` numbers, not a copy.

The console reads the very collectors Prometheus scrapes (the app's ``metrics_registry``,
``hub.rest.metrics``), summed over a connector's tasks on this worker, so a chart on the
connector page and a Grafana panel over ``rate(..._total)`` agree. The page turns two totals
into a rate itself; the hub keeps no history for it.
"""

from __future__ import annotations

import time
from typing import Any

_TOTALS = {
    "kafka_connect_source_task_metrics_source_record_poll_total": "polled",
    "kafka_connect_source_task_metrics_source_record_write_total": "written",
    "kafka_connect_sink_task_metrics_sink_record_read_total": "read",
    "kafka_connect_sink_task_metrics_sink_record_send_total": "sent",
}


def connector_totals(registry: Any, connector: str) -> dict[str, Any]:
    """``{"time": ms, "polled", "written", "read", "sent"}``: record counters of the
    connector's tasks running on this worker (the ones of the other kind stay 0)."""
    totals = dict.fromkeys(_TOTALS.values(), 0.0)
    for family in registry.collect():
        for sample in family.samples:
            key = _TOTALS.get(sample.name)
            if key is not None and sample.labels.get("connector") == connector:
                totals[key] += sample.value
    return {"time": int(time.time() * 1000), **totals}
