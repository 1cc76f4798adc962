"""The classic rebalance protocol, driven by hand with a fake clock (no sleeps, no sockets)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from kio.schema.errors import ErrorCode

from broker.coordinator.group import GroupState
from broker.coordinator.group_manager import GroupManager
from broker.coordinator.member import JoinResult
from broker.coordinator.rebalance import GroupConfig
from tests.broker.coordinator.coordinator_fakes import FakeClock, RecordingStore, join_request

OK = ErrorCode.none


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(scenario())  # type: ignore[arg-type]


async def settle() -> None:
    """Lets parked request tasks observe completed futures (yields; does not wait on time)."""
    for _ in range(5):
        await asyncio.sleep(0)


async def new_member_id(manager: GroupManager, **kw: Any) -> str:
    result = await manager.join(join_request(**kw))
    assert result.error is ErrorCode.member_id_required
    return result.member_id


def start_join(manager: GroupManager, member_id: str, **kw: Any) -> asyncio.Task[JoinResult]:
    return asyncio.get_running_loop().create_task(manager.join(join_request(member_id, **kw)))


async def stable_group_of_one(manager: GroupManager) -> str:
    member = await new_member_id(manager, client_id="a")
    joined = await manager.join(join_request(member, client_id="a"))
    assert joined.error is OK and joined.generation == 1 and joined.leader == member
    synced = await manager.sync("g", 1, member, None, "consumer", "range", {member: b"A"})
    assert synced.error is OK and synced.assignment == b"A"
    return member


def test_member_id_required_then_single_member_becomes_stable(
    manager: GroupManager, store: RecordingStore
) -> None:
    async def scenario() -> None:
        member = await stable_group_of_one(manager)
        group = manager.groups["g"]
        assert group.state is GroupState.STABLE
        assert group.members[member].assignment == b"A"
        assert store.stored == [("g", 1, "CompletingRebalance")]
        assert manager.heartbeat("g", member, None, 1) is OK

    run(scenario)


def test_join_without_member_id_on_old_versions_gets_an_id_at_once(manager: GroupManager) -> None:
    async def scenario() -> None:
        result = await manager.join(join_request(version4=False))
        assert result.error is OK and result.member_id.startswith("client-")
        assert result.members == [(result.member_id, None, b"meta-client")]

    run(scenario)


def test_second_member_triggers_rebalance_and_both_get_assignments(manager: GroupManager) -> None:
    async def scenario() -> None:
        a = await stable_group_of_one(manager)
        b = await new_member_id(manager, client_id="b")
        b_join = start_join(manager, b, client_id="b")
        await settle()
        assert manager.groups["g"].state is GroupState.PREPARING_REBALANCE
        assert not b_join.done()
        assert manager.heartbeat("g", a, None, 1) is ErrorCode.rebalance_in_progress
        a_join = start_join(manager, a, client_id="a")
        await settle()
        ra, rb = a_join.result(), b_join.result()
        assert ra.generation == rb.generation == 2
        assert ra.leader == rb.leader == a
        assert {m[0] for m in ra.members} == {a, b} and rb.members == []
        b_sync = asyncio.get_running_loop().create_task(
            manager.sync("g", 2, b, None, None, None, {})
        )
        await settle()
        assert not b_sync.done(), "a follower waits for the leader's assignment"
        ra_sync = await manager.sync("g", 2, a, None, None, None, {a: b"p0", b: b"p1"})
        await settle()
        assert ra_sync.assignment == b"p0" and b_sync.result().assignment == b"p1"
        assert manager.groups["g"].state is GroupState.STABLE

    run(scenario)


def test_member_that_does_not_rejoin_is_dropped_at_rebalance_timeout(
    manager: GroupManager, clock: FakeClock
) -> None:
    async def scenario() -> None:
        a = await stable_group_of_one(manager)
        b = await new_member_id(manager, client_id="b")
        b_join = start_join(manager, b, client_id="b", rebalance_ms=2_000)
        await settle()
        clock.advance(900)
        assert manager.heartbeat("g", a, None, 1) is ErrorCode.rebalance_in_progress
        clock.advance(4_200)  # past a's rebalance timeout (5 s): a never rejoined
        manager.tick()
        await settle()
        result = b_join.result()
        assert result.error is OK and result.generation == 2 and result.leader == b
        assert list(manager.groups["g"].members) == [b]
        assert manager.heartbeat("g", a, None, 2) is ErrorCode.unknown_member_id

    run(scenario)


def test_session_expiry_removes_member_and_empties_group(
    manager: GroupManager, clock: FakeClock, store: RecordingStore
) -> None:
    async def scenario() -> None:
        a = await stable_group_of_one(manager)
        clock.advance(999)
        manager.tick()
        assert manager.heartbeat("g", a, None, 1) is OK
        clock.advance(1_001)
        manager.tick()
        group = manager.groups["g"]
        assert group.state is GroupState.EMPTY and group.generation == 2
        assert store.stored[-1] == ("g", 2, "Empty")

    run(scenario)


def test_leave_triggers_rebalance_for_the_rest(manager: GroupManager) -> None:
    async def scenario() -> None:
        a = await stable_group_of_one(manager)
        b = await new_member_id(manager, client_id="b")
        b_join = start_join(manager, b, client_id="b")
        a_join = start_join(manager, a, client_id="a")
        await settle()
        assert a_join.result().generation == b_join.result().generation == 2
        await asyncio.gather(
            manager.sync("g", 2, a, None, None, None, {a: b"x", b: b"y"}),
            manager.sync("g", 2, b, None, None, None, {}),
        )
        assert manager.leave("g", [(a, None)]) == [OK]
        group = manager.groups["g"]
        assert group.state is GroupState.PREPARING_REBALANCE and group.leader_id == b
        assert manager.heartbeat("g", b, None, 2) is ErrorCode.rebalance_in_progress
        rejoin = await manager.join(join_request(b, client_id="b"))
        assert rejoin.generation == 3 and rejoin.leader == b
        assert manager.leave("g", [("nobody", None)]) == [ErrorCode.unknown_member_id]

    run(scenario)


def test_leaving_while_parked_in_join_answers_the_parked_request(manager: GroupManager) -> None:
    async def scenario() -> None:
        a = await stable_group_of_one(manager)
        b = await new_member_id(manager, client_id="b")
        b_join = start_join(manager, b, client_id="b")
        await settle()
        manager.leave("g", [(b, None)])
        await settle()
        assert b_join.result().error is ErrorCode.unknown_member_id
        # a is alone again; its rejoin completes the rebalance at once
        assert (await manager.join(join_request(a, client_id="a"))).generation == 2

    run(scenario)


def test_protocol_is_one_every_member_supports(manager: GroupManager) -> None:
    async def scenario() -> None:
        both = [("roundrobin", b"r"), ("range", b"g")]
        a = await new_member_id(manager, client_id="a", protocols=both)
        alone = await manager.join(join_request(a, client_id="a", protocols=both))
        assert alone.protocol_name == "roundrobin"
        # b, supporting only range, joins: the next generation must use range
        b = await new_member_id(manager, client_id="b", protocols=[("range", b"g2")])
        tasks = [
            start_join(manager, b, client_id="b", protocols=[("range", b"g2")]),
            start_join(manager, a, client_id="a", protocols=both),
        ]
        await settle()
        assert {t.result().protocol_name for t in tasks} == {"range"}
        leader = next(t.result() for t in tasks if t.result().members)
        assert sorted(m[2] for m in leader.members) == [b"g", b"g2"]
        bad = await manager.join(join_request(protocols=[("sticky", b"")]))
        assert bad.error is ErrorCode.inconsistent_group_protocol
        other_type = await manager.join(join_request(protocol_type="connect"))
        assert other_type.error is ErrorCode.inconsistent_group_protocol

    run(scenario)


def test_stale_generation_and_unknown_member_are_rejected(manager: GroupManager) -> None:
    async def scenario() -> None:
        a = await stable_group_of_one(manager)
        assert manager.heartbeat("g", a, None, 0) is ErrorCode.illegal_generation
        assert manager.heartbeat("g", "ghost", None, 1) is ErrorCode.unknown_member_id
        assert manager.heartbeat("nope", a, None, 1) is ErrorCode.unknown_member_id
        sync = await manager.sync("g", 7, a, None, None, None, {})
        assert sync.error is ErrorCode.illegal_generation
        sync = await manager.sync("g", 1, a, None, "consumer", "other", {})
        assert sync.error is ErrorCode.inconsistent_group_protocol
        unknown = await manager.join(join_request("ghost"))
        assert unknown.error is ErrorCode.unknown_member_id
        assert (await manager.join(join_request(session_ms=10))).error is (
            ErrorCode.invalid_session_timeout
        )

    run(scenario)


def test_follower_rejoin_in_stable_group_does_not_rebalance(manager: GroupManager) -> None:
    async def scenario() -> None:
        a = await stable_group_of_one(manager)
        b = await new_member_id(manager, client_id="b")
        tasks = [start_join(manager, b, client_id="b"), start_join(manager, a, client_id="a")]
        await settle()
        await asyncio.gather(
            manager.sync("g", 2, a, None, None, None, {a: b"x", b: b"y"}),
            manager.sync("g", 2, b, None, None, None, {}),
        )
        again = await manager.join(join_request(b, client_id="b"))
        assert again.generation == 2 and again.error is OK and tasks[0].done()
        assert manager.groups["g"].state is GroupState.STABLE

    run(scenario)


def test_leader_rejoin_in_stable_group_rebalances_with_every_member(manager: GroupManager) -> None:
    """What kafka-python 3.0 does when it drops a finished join (see test_clients_python).

    The leader's JoinGroup in a Stable group starts a rebalance (as in Kafka); the follower
    learns it from its heartbeat, rejoins, and the next generation includes both, with both
    assignments delivered. Repeating it never leaves a member out or unanswered.
    """

    async def scenario() -> None:
        a = await stable_group_of_one(manager)
        b = await new_member_id(manager, client_id="b")
        tasks = [start_join(manager, b, client_id="b"), start_join(manager, a, client_id="a")]
        await settle()
        assert all(t.done() for t in tasks)
        await asyncio.gather(
            manager.sync("g", 2, a, None, None, None, {a: b"x", b: b"y"}),
            manager.sync("g", 2, b, None, None, None, {}),
        )
        for generation in (3, 4, 5):
            a_join = start_join(manager, a, client_id="a")
            await settle()
            assert not a_join.done(), "the leader's rejoin waits for the follower"
            group = manager.groups["g"]
            assert group.state is GroupState.PREPARING_REBALANCE
            error = manager.heartbeat("g", b, None, generation - 1)
            assert error is ErrorCode.rebalance_in_progress
            b_join = start_join(manager, b, client_id="b")
            await settle()
            ra, rb = a_join.result(), b_join.result()
            assert ra.error is rb.error is OK and ra.generation == rb.generation == generation
            assert {m[0] for m in ra.members} == {a, b}
            a_sync, b_sync = await asyncio.gather(
                manager.sync("g", generation, a, None, None, None, {a: b"x", b: b"y"}),
                manager.sync("g", generation, b, None, None, None, {}),
            )
            assert (a_sync.assignment, b_sync.assignment) == (b"x", b"y")
            assert group.state is GroupState.STABLE and group.generation == generation

    run(scenario)


def test_static_member_restart_keeps_assignment_without_rebalance(
    manager: GroupManager,
) -> None:
    async def scenario() -> None:
        first = await manager.join(join_request(instance="i-1", client_id="a"))
        assert first.error is OK and first.generation == 1, "static members skip MEMBER_ID_REQUIRED"
        await manager.sync("g", 1, first.member_id, "i-1", None, None, {first.member_id: b"A"})
        again = await manager.join(join_request(instance="i-1", client_id="a"))
        assert again.error is OK and again.generation == 1
        assert again.member_id != first.member_id and again.skip_assignment
        group = manager.groups["g"]
        assert group.state is GroupState.STABLE and list(group.members) == [again.member_id]
        assert manager.heartbeat("g", first.member_id, "i-1", 1) is ErrorCode.fenced_instance_id
        synced = await manager.sync("g", 1, again.member_id, "i-1", None, None, {})
        assert synced.assignment == b"A"
        assert manager.leave("g", [("", "i-1")]) == [OK]
        assert group.state is GroupState.EMPTY

    run(scenario)


def test_initial_rebalance_delay_gathers_members_into_one_generation(
    clock: FakeClock, store: RecordingStore
) -> None:
    config = GroupConfig(min_session_timeout_ms=100, initial_rebalance_delay_ms=300)
    manager = GroupManager(config, store, clock)  # type: ignore[arg-type]

    async def scenario() -> None:
        ids = [await new_member_id(manager, client_id=c) for c in "ab"]
        a_join = start_join(manager, ids[0], client_id="a")
        await settle()
        clock.advance(200)
        manager.tick()
        b_join = start_join(manager, ids[1], client_id="b")
        await settle()
        clock.advance(200)  # the first deadline passed, but b's arrival extended it
        manager.tick()
        await settle()
        assert not a_join.done()
        clock.advance(200)
        manager.tick()
        await settle()
        assert a_join.result().generation == b_join.result().generation == 1

    run(scenario)


def test_pending_member_that_never_rejoins_expires(manager: GroupManager, clock: FakeClock) -> None:
    async def scenario() -> None:
        a = await stable_group_of_one(manager)
        ghost = await new_member_id(manager, client_id="ghost")
        assert ghost in manager.groups["g"].pending_members
        clock.advance(1_001)
        manager.heartbeat("g", a, None, 1)
        manager.tick()
        assert not manager.groups["g"].pending_members
        assert manager.groups["g"].state is GroupState.STABLE

    run(scenario)


def test_pending_member_leaving_does_not_disturb_a_stable_group(manager: GroupManager) -> None:
    async def scenario() -> None:
        await stable_group_of_one(manager)
        ghost = await new_member_id(manager, client_id="ghost")
        assert manager.leave("g", [(ghost, None)]) == [OK]
        group = manager.groups["g"]
        assert group.state is GroupState.STABLE and not group.pending_members

    run(scenario)


def test_leader_that_never_syncs_is_dropped_at_the_rebalance_timeout(
    manager: GroupManager, clock: FakeClock
) -> None:
    async def scenario() -> None:
        leader = await new_member_id(manager, client_id="a")
        await manager.join(join_request(leader, client_id="a"))  # generation 1, leader a
        follower = await new_member_id(manager, client_id="b")
        tasks = [start_join(manager, follower, client_id="b"), start_join(manager, leader)]
        await settle()
        assert all(t.result().generation == 2 for t in tasks)
        synced = asyncio.get_running_loop().create_task(
            manager.sync("g", 2, follower, None, None, None, {})
        )
        await settle()
        for _ in range(6):  # both heartbeat; only the follower ever syncs
            clock.advance(900)
            assert manager.heartbeat("g", leader, None, 2) is OK
            assert manager.heartbeat("g", follower, None, 2) is OK
            manager.tick()
        await settle()
        assert synced.result().error is ErrorCode.rebalance_in_progress
        group = manager.groups["g"]
        assert list(group.members) == [follower]
        assert group.state is GroupState.PREPARING_REBALANCE

    run(scenario)


def test_a_group_whose_tick_fails_does_not_stop_the_others(
    manager: GroupManager, clock: FakeClock, monkeypatch: Any
) -> None:
    async def scenario() -> None:
        bad_ghost = await new_member_id(manager, group="bad", client_id="ghost")
        ghost = await new_member_id(manager, client_id="ghost")
        assert "bad" in manager.groups and ghost in manager.groups["g"].pending_members

        def broken(now: int) -> list[str]:
            raise RuntimeError("corrupt group state")

        monkeypatch.setattr(manager.groups["bad"], "expired_pending", broken)  # "bad" first
        clock.advance(1_001)
        manager.tick()
        assert not manager.groups["g"].pending_members  # expired despite "bad" failing
        [failure] = manager.tick_failures.failures()
        assert failure.key == "bad" and "corrupt group state" in failure.error
        manager.tick()  # not retried before its backoff
        assert manager.tick_failures.failures()[0].failures == 1
        monkeypatch.undo()
        clock.advance(1_000)
        manager.tick()  # retried, succeeds: no longer reported
        assert manager.tick_failures.failures() == []
        assert bad_ghost not in manager.groups["bad"].pending_members

    run(scenario)
