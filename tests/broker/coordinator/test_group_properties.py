"""Random sequences of group requests and clock moves keep the group's invariants.

Hypothesis drives a ``GroupManager`` with joins (new and known member ids, with varying
protocols), syncs, heartbeats, leaves and time passing, and checks after every step what
must hold in each state. At the end, time runs far past every timeout: every parked
JoinGroup and SyncGroup must have been answered (nobody waits forever).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from kio.schema.errors import ErrorCode

from broker.coordinator.group import GroupState
from broker.coordinator.group_manager import GroupManager
from broker.coordinator.member import JoinResult, SyncResult
from broker.coordinator.rebalance import GroupConfig
from tests.broker.coordinator.coordinator_fakes import FakeClock, RecordingStore, join_request

PROTOCOLS = [
    [("range", b"r")],
    [("roundrobin", b"o"), ("range", b"r")],
    [("roundrobin", b"o")],
]
SESSION_MS, REBALANCE_MS = 1_000, 3_000


class GroupMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.clock = FakeClock()
        config = GroupConfig(min_session_timeout_ms=100, initial_rebalance_delay_ms=500)
        self.manager = GroupManager(config, RecordingStore(), self.clock)  # type: ignore[arg-type]
        self.ids: list[str] = []
        self.tasks: list[asyncio.Task[Any]] = []
        self.generation = 0

    def settle(self) -> None:
        async def spin() -> None:
            for _ in range(5):
                await asyncio.sleep(0)

        self.loop.run_until_complete(spin())

    def submit(self, coro: Any) -> asyncio.Task[Any]:
        task = self.loop.create_task(coro)
        task.add_done_callback(self.record)
        self.tasks.append(task)
        self.settle()
        return task

    def record(self, task: asyncio.Task[Any]) -> None:
        result = task.result()
        kind = "sync" if isinstance(result, SyncResult) else "join"
        event(f"{kind} {result.error.name}")
        if isinstance(result, JoinResult) and result.member_id not in self.ids:
            self.ids.append(result.member_id)

    @property
    def group(self) -> Any:
        return self.manager.groups.get("g")

    @rule(client=st.sampled_from("abc"), protocols=st.sampled_from(PROTOCOLS), v4=st.booleans())
    def join_new(self, client: str, protocols: list[tuple[str, bytes]], v4: bool) -> None:
        request = join_request(
            client_id=client,
            protocols=protocols,
            session_ms=SESSION_MS,
            rebalance_ms=REBALANCE_MS,
            version4=v4,
        )
        self.submit(self.manager.join(request))

    @precondition(lambda self: self.ids)
    @rule(data=st.data(), protocols=st.sampled_from(PROTOCOLS))
    def rejoin(self, data: st.DataObject, protocols: list[tuple[str, bytes]]) -> None:
        member = data.draw(st.sampled_from(self.ids))
        request = join_request(
            member, protocols=protocols, session_ms=SESSION_MS, rebalance_ms=REBALANCE_MS
        )
        self.submit(self.manager.join(request))

    @precondition(lambda self: self.group is not None and self.group.members)
    @rule(data=st.data(), stale=st.booleans())
    def sync(self, data: st.DataObject, stale: bool) -> None:
        member = data.draw(st.sampled_from(list(self.group.members)))
        generation = self.group.generation - (1 if stale else 0)
        assignments = {m: m.encode() for m in self.group.members}
        self.submit(self.manager.sync("g", generation, member, None, None, None, assignments))

    @precondition(
        lambda self: self.group is not None and self.group.state is GroupState.COMPLETING_REBALANCE
    )
    @rule(leader_first=st.booleans())
    def everyone_syncs(self, leader_first: bool) -> None:
        group = self.group
        order = sorted(group.members, key=lambda m: (m == group.leader_id) != leader_first)
        assignments = {m: m.encode() for m in group.members}
        for member in order:
            sync = self.manager.sync("g", group.generation, member, None, None, None, assignments)
            self.submit(sync)

    @precondition(lambda self: self.group is not None and self.group.members)
    @rule(data=st.data())
    def heartbeat(self, data: st.DataObject) -> None:
        member = data.draw(st.sampled_from(list(self.group.members)))
        self.manager.heartbeat("g", member, None, self.group.generation)

    @precondition(lambda self: self.ids)
    @rule(data=st.data())
    def leave(self, data: st.DataObject) -> None:
        self.manager.leave("g", [(data.draw(st.sampled_from(self.ids)), None)])
        self.settle()

    @rule(ms=st.integers(0, 2 * REBALANCE_MS))
    def time_passes(self, ms: int) -> None:
        self.clock.advance(ms)
        self.manager.tick()
        self.settle()

    @invariant()
    def group_is_consistent(self) -> None:
        group = self.group
        if group is None:
            return
        assert group.generation >= self.generation, "generations never go back"
        self.generation = group.generation
        members = group.members
        if group.state is GroupState.EMPTY:
            assert not members
        if members:
            assert group.leader_id in members
            assert {m.protocol_type for m in members.values()} == {group.protocol_type}
        if group.state in (GroupState.COMPLETING_REBALANCE, GroupState.STABLE):
            assert members and group.protocol_name in group.candidate_protocols()
        if group.state is not GroupState.PREPARING_REBALANCE:
            assert all(m.join_waiter is None for m in members.values())
        if group.state is not GroupState.COMPLETING_REBALANCE:
            assert all(m.sync_waiter is None for m in members.values())
        if group.state is GroupState.STABLE:
            assert all(m.assignment == m.member_id.encode() for m in members.values())
        assert set(group.static_members.values()) <= set(members)
        for task in self.tasks:
            result = task.result() if task.done() else None
            if isinstance(result, JoinResult) and result.error is ErrorCode.none:
                assert result.generation <= group.generation

    def teardown(self) -> None:
        try:
            for _ in range(6):
                self.clock.advance(4 * REBALANCE_MS)
                self.manager.tick()
                self.settle()
            waiting = [t for t in self.tasks if not t.done()]
            assert not waiting, f"{len(waiting)} requests never answered"
            group = self.group
            assert group is None or group.state is GroupState.EMPTY
        finally:
            self.loop.close()


GroupMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("SLUICE_HYPOTHESIS_EXAMPLES", "60")),
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_group_state_machine = GroupMachine.TestCase
