"""GroupCoordinator over a real LogManager: commit rules, admin APIs, persistence on reopen."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from kio.schema.errors import ErrorCode

from broker.config import BrokerConfig
from broker.coordinator import GroupCoordinator
from broker.coordinator.offsets_topic import TOPIC
from broker.coordinator.records import OffsetValue
from broker.log.log_manager import LogManager
from tests.broker.coordinator.coordinator_fakes import FakeClock, join_request

OK = ErrorCode.none


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(scenario())  # type: ignore[arg-type]


@asynccontextmanager
async def opened(
    data_dir: Path, clock: FakeClock, retention_minutes: int = 7 * 24 * 60
) -> AsyncIterator[GroupCoordinator]:
    """A coordinator on a LogManager over ``data_dir``, closed (like a clean stop) on exit."""
    logs = LogManager(data_dir)
    logs.load()
    config = BrokerConfig(
        data_dir=data_dir,
        offsets_topic_num_partitions=3,
        group_min_session_timeout_ms=100,
        group_initial_rebalance_delay_ms=0,
        offsets_retention_minutes=retention_minutes,
    )
    coordinator = GroupCoordinator(logs, config, clock=clock, tick_interval_ms=3_600_000)
    await coordinator.start()
    try:
        yield coordinator
    finally:
        await coordinator.stop()
        logs.close()


async def stable_member(
    coordinator: GroupCoordinator, group: str = "g", metadata: bytes = b"meta"
) -> tuple[str, int]:
    protocols = [("range", metadata)]
    first = await coordinator.join_group(join_request(group=group, protocols=protocols))
    joined = await coordinator.join_group(
        join_request(first.member_id, group=group, protocols=protocols)
    )
    member = joined.member_id
    synced = await coordinator.sync_group(
        group, joined.generation, member, None, None, None, {member: b"assignment"}
    )
    assert synced.error is OK
    return member, joined.generation


def offsets(*items: tuple[str, int, int]) -> dict[tuple[str, int], OffsetValue]:
    return {(t, p): OffsetValue(o, -1, f"m{o}", 1) for t, p, o in items}


def test_offsets_and_groups_survive_reopen(tmp_path: Path) -> None:
    clock = FakeClock()

    async def scenario() -> None:
        async with opened(tmp_path, clock) as coordinator:
            assert coordinator.topic.partitions == 3
            member, generation = await stable_member(coordinator)
            result = coordinator.commit_offsets(
                "g", generation, member, None, offsets(("t", 0, 10), ("t", 1, 20))
            )
            assert set(result.values()) == {OK}
            assert coordinator.commit_offsets("g", generation, member, None, offsets(("t", 0, 11)))
            assert coordinator.commit_offsets("solo", -1, "", None, offsets(("u", 0, 5)))
            coordinator.commit_offsets("doomed", -1, "", None, offsets(("u", 0, 1)))
            assert coordinator.delete_groups(["doomed"]) == {"doomed": OK}
        async with opened(tmp_path, clock) as coordinator:
            error, fetched = coordinator.fetch_offsets("g", None)
            assert error is OK
            assert {tp: v.offset for tp, v in fetched.items() if v} == {("t", 0): 11, ("t", 1): 20}
            t0 = fetched[("t", 0)]
            assert t0 is not None and t0.metadata == "m11"
            assert coordinator.fetch_offsets("solo", [("u", 0), ("u", 1)])[1] == {
                ("u", 0): OffsetValue(5, -1, "m5", 1),
                ("u", 1): None,
            }
            assert coordinator.fetch_offsets("doomed", None)[1] == {}
            listed = {g: (ptype, state) for g, ptype, state in coordinator.list_groups()}
            assert listed == {"g": ("consumer", "Stable"), "solo": ("", "Empty")}
            # the restored member keeps heartbeating with its generation: no rebalance
            assert coordinator.heartbeat("g", member, None, generation) is OK
            described = coordinator.describe_group("g")
            assert described is not None and described.protocol == "range"
            assert described.members[0].assignment == b"assignment"
            assert coordinator.commit_offsets("g", generation, member, None, offsets(("t", 0, 12)))

    run(scenario)
    # the writes went to the compacted internal topic
    logs = LogManager(tmp_path)
    logs.load()
    try:
        assert logs.topic(TOPIC).configs["cleanup.policy"] == "compact"
    finally:
        logs.close()


def test_commit_rules_follow_membership(tmp_path: Path) -> None:
    clock = FakeClock()

    async def scenario() -> None:
        async with opened(tmp_path, clock) as coordinator:
            member, gen = await stable_member(coordinator)
            one = offsets(("t", 0, 1))

            def commit(generation: int, member_id: str, group: str = "g") -> ErrorCode:
                return coordinator.commit_offsets(group, generation, member_id, None, one)[("t", 0)]

            assert commit(gen, member) is OK
            assert commit(gen + 1, member) is ErrorCode.illegal_generation
            assert commit(gen, "stranger") is ErrorCode.unknown_member_id
            assert commit(-1, "") is ErrorCode.unknown_member_id, "admin commit into live group"
            assert commit(3, "x", group="new") is ErrorCode.illegal_generation
            assert commit(-1, "", group="") is ErrorCode.invalid_group_id
            too_big = {("t", 0): OffsetValue(1, -1, "x" * 5000, 1)}
            result = coordinator.commit_offsets("g", gen, member, None, too_big)
            assert result[("t", 0)] is ErrorCode.offset_metadata_too_large
            # during a rebalance the old generation may still commit (onPartitionsRevoked)
            other = await coordinator.join_group(join_request(group="g", client_id="b"))
            rejoin = asyncio.get_running_loop().create_task(
                coordinator.join_group(join_request(other.member_id, client_id="b"))
            )
            await asyncio.sleep(0)
            assert commit(gen, member) is OK
            rejoin.cancel()

    run(scenario)


def test_delete_list_describe_and_offset_delete(tmp_path: Path) -> None:
    clock = FakeClock()

    async def scenario() -> None:
        async with opened(tmp_path, clock) as coordinator:
            subscription = struct.pack(">hih1si", 0, 1, 1, b"t", -1)  # v0, topics ["t"], no data
            member, gen = await stable_member(coordinator, "live", subscription)
            coordinator.commit_offsets("idle", -1, "", None, offsets(("t", 0, 3), ("t", 1, 4)))
            assert coordinator.list_groups(states=["stable"]) == [("live", "consumer", "Stable")]
            assert coordinator.list_groups(types=["consumer"]) == []
            assert [g for g, *_ in coordinator.list_groups(types=["Classic"])] == ["live", "idle"]
            assert coordinator.describe_group("missing") is None
            idle = coordinator.describe_group("idle")
            assert idle is not None and idle.state == "Empty" and idle.members == []
            assert coordinator.delete_groups(["live", "idle", "missing"]) == {
                "live": ErrorCode.non_empty_group,
                "idle": OK,
                "missing": ErrorCode.group_id_not_found,
            }
            coordinator.commit_offsets("live", gen, member, None, offsets(("t", 0, 1), ("u", 0, 1)))
            error, results = coordinator.delete_offsets("live", [("t", 0), ("u", 0)])
            assert error is OK
            assert results == {("t", 0): ErrorCode.group_subscribed_to_topic, ("u", 0): OK}
            assert coordinator.fetch_offsets("live", None)[1] == offsets(("t", 0, 1))
            assert coordinator.delete_offsets("missing", [("t", 0)])[0] is (
                ErrorCode.group_id_not_found
            )

    run(scenario)


def test_session_expiry_runs_from_tick_and_stop_answers_parked_joins(tmp_path: Path) -> None:
    clock = FakeClock()

    async def scenario() -> None:
        async with opened(tmp_path, clock) as coordinator:
            member, gen = await stable_member(coordinator)
            clock.advance(1_001)
            coordinator.tick()
            assert coordinator.heartbeat("g", member, None, gen) is ErrorCode.unknown_member_id
            assert coordinator.list_groups() == [("g", "consumer", "Empty")]
            # b becomes the only member (generation 2); c's join then waits for b to rejoin
            first = await coordinator.join_group(join_request(client_id="b"))
            await coordinator.join_group(join_request(first.member_id, client_id="b"))
            other = await coordinator.join_group(join_request(client_id="c"))
            waiting = asyncio.get_running_loop().create_task(
                coordinator.join_group(join_request(other.member_id, client_id="c"))
            )
            await asyncio.sleep(0)
            assert not waiting.done()
            await coordinator.stop()
            assert (await waiting).error is ErrorCode.not_coordinator
            assert coordinator.heartbeat("g", member, None, gen) is (
                ErrorCode.coordinator_not_available
            )

    run(scenario)


def test_offsets_of_empty_groups_expire_after_retention(tmp_path: Path) -> None:
    clock = FakeClock()
    minute = 60_000

    async def scenario() -> None:
        async with opened(tmp_path, clock, retention_minutes=30) as coordinator:
            member, gen = await stable_member(coordinator, "active")
            coordinator.commit_offsets("active", gen, member, None, offsets(("t", 0, 1)))
            left, left_gen = await stable_member(coordinator, "left")
            coordinator.commit_offsets("left", left_gen, left, None, offsets(("t", 0, 1)))
            coordinator.commit_offsets("old", -1, "", None, {("t", 0): OffsetValue(1, -1, "", 0)})
            coordinator.commit_offsets(
                "recent", -1, "", None, {("t", 0): OffsetValue(1, -1, "", clock() - minute)}
            )
            clock.advance(20 * minute)
            coordinator.leave_group("left", [(left, None)])  # empty from now on
            coordinator.heartbeat("active", member, None, gen)
            coordinator.tick()  # first retention check (interval 10 min has passed)
            assert {g for g, *_ in coordinator.list_groups()} == {"active", "left", "recent"}
            clock.advance(20 * minute)
            coordinator.heartbeat("active", member, None, gen)
            coordinator.tick()  # "recent" is 41 min old; "left" has been empty for 20 min
            assert {g for g, *_ in coordinator.list_groups()} == {"active", "left"}
            clock.advance(11 * minute)
            coordinator.heartbeat("active", member, None, gen)
            coordinator.tick()
            assert [g for g, *_ in coordinator.list_groups()] == ["active"]
            assert coordinator.fetch_offsets("active", None)[1]
        async with opened(tmp_path, clock, retention_minutes=30) as coordinator:
            assert [g for g, *_ in coordinator.list_groups()] == ["active"]
            assert coordinator.fetch_offsets("left", None)[1] == {}

    run(scenario)
