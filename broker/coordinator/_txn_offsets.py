"""The group coordinator's part in transactions (KIP-98): TxnOffsetCommit and markers.

A transactional producer commits a consumer group's offsets *inside* its transaction
(``send_offsets_to_transaction``): the offsets are stored pending (``OffsetManager``) and
become the group's committed offsets only when the transaction commits, which the
transaction coordinator signals by writing its marker into the group's
``__consumer_offsets`` partition (``complete_transaction``); an abort drops them. A consumer
fetching offsets with ``require_stable`` is told UNSTABLE_OFFSET_COMMIT meanwhile.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from kio.schema.errors import ErrorCode

from broker.coordinator.offset_manager import TopicPartition
from broker.coordinator.records import OffsetValue
from broker.errors import BrokerError

if TYPE_CHECKING:
    from broker.coordinator.group_manager import GroupManager
    from broker.coordinator.offset_manager import OffsetManager

log = logging.getLogger(__name__)

MAX_METADATA_BYTES = 4096
"""``offset.metadata.max.bytes``: longer commit metadata gets OFFSET_METADATA_TOO_LARGE."""


class TxnOffsetsMixin:
    # Provided by GroupCoordinator.
    active: bool
    groups: GroupManager
    offsets: OffsetManager

    def owns(self, group_id: str) -> bool:
        raise NotImplementedError

    def commit_transactional_offsets(
        self,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        generation: int,
        member_id: str,
        offsets: Mapping[TopicPartition, OffsetValue],
    ) -> dict[TopicPartition, ErrorCode]:
        """TxnOffsetCommit: stores the offsets pending the producer's transaction.

        Kafka's checks: a member id, if given, must be a member; a generation, if given
        (>= 0), the group's; nothing else about the group's state matters, so a producer
        that only forwards offsets (no group membership) may commit.
        """
        if not self.active:
            return dict.fromkeys(offsets, ErrorCode.coordinator_not_available)
        if not self.owns(group_id):
            return dict.fromkeys(offsets, ErrorCode.not_coordinator)
        if not group_id:
            return dict.fromkeys(offsets, ErrorCode.invalid_group_id)
        group = self.groups.groups.get(group_id)
        if group is not None and member_id and member_id not in group.members:
            return dict.fromkeys(offsets, ErrorCode.unknown_member_id)
        if generation >= 0 and (group is None or generation != group.generation):
            return dict.fromkeys(offsets, ErrorCode.illegal_generation)
        results = {
            tp: ErrorCode.offset_metadata_too_large
            for tp, v in offsets.items()
            if len(v.metadata.encode()) > MAX_METADATA_BYTES
        }
        accepted = {tp: v for tp, v in offsets.items() if tp not in results}
        try:
            self.offsets.commit_transactional(group_id, producer_id, producer_epoch, accepted)
        except BrokerError as exc:
            code = exc.error_code
            if code not in (ErrorCode.invalid_producer_epoch, ErrorCode.producer_fenced):
                log.error("group %s: transactional commit failed: %s", group_id, exc)
                code = ErrorCode.coordinator_not_available
            return dict.fromkeys(offsets, code)
        self.groups.get_or_create(group_id)
        results.update(dict.fromkeys(accepted, ErrorCode.none))
        return results

    def complete_transaction(self, producer_id: int, partition: int, commit: bool) -> None:
        """A transaction marker was written to offsets partition ``partition``."""
        for group_id in self.offsets.complete_transaction(producer_id, partition, commit):
            self.groups.get_or_create(group_id)

    def pending_offsets(self, group_id: str) -> set[TopicPartition]:
        """Partitions with transactional offsets not yet committed (require_stable)."""
        return self.offsets.pending(group_id)
