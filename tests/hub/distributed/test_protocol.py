"""The group protocol's pure parts: member metadata, assignments, the assignor, config keys."""

from __future__ import annotations

import collections

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hub.runtime.config import WorkerConfig
from hub.runtime.distributed.protocol import Assignment, MemberMetadata, assign
from hub.runtime.errors import WorkerConfigError


def _members(n: int) -> dict[str, MemberMetadata]:
    return {f"m{i}": MemberMetadata(f"http://w{i}:8083", 0) for i in range(n)}


def test_codecs_round_trip() -> None:
    meta = MemberMetadata("http://h:1", 17)
    assert MemberMetadata.decode(meta.encode()) == meta
    a = Assignment("m1", "http://h:1", 17, ("c",), (("c", 0), ("d", 2)), members={"u": ["c"]})
    assert Assignment.decode(a.encode()) == a


@given(
    st.integers(1, 6),
    st.dictionaries(st.text("abc", min_size=1, max_size=4), st.integers(0, 5), max_size=8),
)
def test_every_unit_once_and_balanced(members: int, counts: dict[str, int]) -> None:
    plan = assign(_members(members), counts)
    connectors = [c for conns, _ in plan.values() for c in conns]
    tasks = [t for _, ts in plan.values() for t in ts]
    assert sorted(connectors) == sorted(counts)
    assert sorted(tasks) == sorted((c, i) for c, n in counts.items() for i in range(n))
    loads = [len(conns) + len(ts) for conns, ts in plan.values()]
    assert max(loads) - min(loads) <= 1


def test_connectors_spread_not_stacked_on_the_first_member() -> None:
    plan = assign(_members(3), {f"c{i}": 1 for i in range(6)})
    per_member = collections.Counter(len(conns) for conns, _ in plan.values())
    assert per_member == {2: 3}


def test_the_same_inputs_give_the_same_plan_whoever_leads() -> None:
    members = _members(3)
    reordered = dict(reversed(list(members.items())))
    assert assign(members, {"a": 2, "b": 1}) == assign(reordered, {"a": 2, "b": 1})


def test_incremental_cooperative_settings_are_refused_by_name() -> None:
    with pytest.raises(WorkerConfigError) as refused:
        WorkerConfig.from_mapping({"scheduled.rebalance.max.delay.ms": "0"})
    assert "scheduled.rebalance.max.delay.ms" in refused.value.errors
    with pytest.raises(WorkerConfigError) as refused:
        WorkerConfig.from_mapping({"connect.protocol": "sessioned"})
    assert "connect.protocol" in refused.value.errors
    config = WorkerConfig.from_mapping({"session.timeout.ms": "6000", "connect.protocol": "eager"})
    assert config.session_timeout_ms == 6000


def test_distributed_workers_refuse_what_they_cannot_honour() -> None:
    from hub.runtime.distributed.herder import DistributedHerder

    for raw, key in (
        ({"rest.port": "0"}, "rest.port"),
        ({"rest.advertised.listener": "https"}, "rest.advertised.listener"),
    ):
        with pytest.raises(WorkerConfigError) as refused:
            DistributedHerder(WorkerConfig.from_mapping(raw))
        assert key in refused.value.errors
