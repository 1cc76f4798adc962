"""Reading MirrorMaker 2's checkpoints from a client: Kafka's ``RemoteClusterUtils``.

For a failover by hand (or a consumer that picks its own start offsets): the checkpoints of a
group, mirrored from the cluster ``source_alias``, as they stand on the cluster a client is
connected to (the mirror's target). ``translate_offsets`` gives, per remote topic partition,
the offset to resume at (never past a record the group had not consumed); a consumer then
``assign``s with them, or commits them for its group.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from connectors.mirror.checkpoint_store import read_checkpoints
from connectors.mirror.policy import DefaultReplicationPolicy
from connectors.mirror.wire import Checkpoint
from hub.api import ConnectError

log = logging.getLogger(__name__)


def read_group_checkpoints(
    settings: Mapping[str, str],
    source_alias: str,
    group: str,
    policy: DefaultReplicationPolicy | None = None,
    timeout: float = 30.0,
) -> dict[tuple[str, int], Checkpoint]:
    """The latest checkpoint per (remote topic, partition) of ``group``.

    ``settings``: confluent-kafka settings of the cluster holding the checkpoints
    (``bootstrap.servers`` and security); ``group.id`` is not used for anything but required.
    """
    topic = (policy or DefaultReplicationPolicy()).checkpoints_topic(source_alias)
    consumer = {"group.id": f"mm2-checkpoints-reader-{group}", **settings}
    consumer["enable.auto.commit"] = "false"
    found, ok = read_checkpoints(consumer, topic, [group], timeout, {"group": group})
    if not ok:
        raise ConnectError(f"could not read {topic} to its end (see the log)")
    return found.get(group, {})


def translate_offsets(
    settings: Mapping[str, str],
    source_alias: str,
    group: str,
    policy: DefaultReplicationPolicy | None = None,
    timeout: float = 30.0,
) -> dict[tuple[str, int], int]:
    """(remote topic, partition) -> the offset ``group`` resumes at on this cluster."""
    checkpoints = read_group_checkpoints(settings, source_alias, group, policy, timeout)
    return {key: cp.downstream for key, cp in checkpoints.items()}
