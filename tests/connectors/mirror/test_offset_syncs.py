"""Offset syncs: when the writer emits them, and how the store translates with them."""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from connectors.mirror.offset_sync_store import SLOTS, OffsetSyncStore, lookup, updated
from connectors.mirror.offset_sync_writer import PartitionState
from connectors.mirror.wire import OffsetSync


def test_partition_state_matches_kafka_rules() -> None:
    state = PartitionState(max_lag=3)
    assert state.update(10, 100)  # first record of this task's lifetime
    assert not state.update(11, 101)
    assert not state.update(12, 102)
    assert not state.update(13, 103)
    assert state.update(14, 104)  # 104 - (100 + 1) >= 3
    assert state.update(16, 105)  # upstream gap (compaction, markers)
    assert state.update(17, 50)  # downstream rewind


@settings(max_examples=200, deadline=None)
@given(
    max_lag=st.integers(0, 20),
    runs=st.lists(st.tuples(st.integers(1, 60), st.integers(0, 3), st.integers(0, 3)), max_size=8),
)
def test_contiguous_runs_decide_like_record_by_record(
    max_lag: int, runs: list[tuple[int, int, int]]
) -> None:
    """``due_in_run`` (arithmetic) equals ``update`` called per record, run after run."""
    fast, slow = PartitionState(max_lag), PartitionState(max_lag)
    upstream = downstream = 0
    for n, upstream_gap, downstream_gap in runs:
        upstream += upstream_gap
        downstream += downstream_gap
        due_fast = fast.due_in_run(upstream, downstream, n)
        due_slow = [i for i in range(n) if slow.update(upstream + i, downstream + i)]
        assert due_fast == due_slow
        assert (fast.last_sync, fast.previous_upstream, fast.previous_downstream) == (
            slow.last_sync, slow.previous_upstream, slow.previous_downstream,
        )  # fmt: skip
        upstream += n
        downstream += n


def _store(syncs: list[OffsetSync]) -> OffsetSyncStore:
    store = OffsetSyncStore({}, "t", {})
    for sync in syncs:
        store.apply(sync)
    store.ready.set()
    return store


def test_translation_is_exact_at_a_sync_and_one_past_it_otherwise() -> None:
    store = _store([OffsetSync("t", 0, 100, 10), OffsetSync("t", 0, 200, 60)])
    assert store.translate("t", 0, 200) == 60
    assert store.translate("t", 0, 250) == 61
    assert store.translate("t", 0, 150) == 11
    assert store.translate("t", 0, 100) == 10
    assert store.translate("t", 0, 50) == -1  # behind every sync: cannot translate
    assert store.translate("t", 1, 50) is None  # nothing known about the partition


def test_nothing_is_translated_before_the_syncs_were_read() -> None:
    store = OffsetSyncStore({}, "t", {})
    store.apply(OffsetSync("t", 0, 1, 1))
    assert store.translate("t", 0, 1) is None


def test_an_upstream_rewind_voids_older_syncs() -> None:
    store = _store([OffsetSync("t", 0, 100, 10), OffsetSync("t", 0, 5, 70)])
    assert store.translate("t", 0, 100) == 71


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), count=st.integers(1, 400), probes=st.integers(1, 30))
def test_translation_never_skips_a_mirrored_record(seed: int, count: int, probes: int) -> None:
    """With syncs taken from a real mapping (upstream gaps, other writers' records in between
    downstream), a group resuming at the translation re-reads and never skips: every record at
    or after the group's upstream position is at or after the translated downstream offset."""
    rng = random.Random(seed)
    mapping: list[tuple[int, int]] = []
    up = down = 0
    for _ in range(count):
        up += rng.choice((1, 1, 1, 2, 5))
        down += rng.choice((1, 1, 1, 3))
        mapping.append((up, down))
    syncs = [OffsetSync("t", 0, u, d) for u, d in mapping if rng.random() < 0.3]
    if not syncs:
        return
    store = _store(syncs)
    slots = store.syncs[("t", 0)]
    assert len(slots) == SLOTS and slots[0] == syncs[-1]
    assert all(a.upstream >= b.upstream for a, b in itertools.pairwise(slots))
    for _ in range(probes):
        committed = rng.randint(0, up + 3)
        translated = store.translate("t", 0, committed)
        assert translated is not None
        if translated < 0:
            assert committed < lookup(slots, committed).upstream
            continue
        for u, d in mapping:
            if u >= committed:
                assert d >= translated, (committed, translated, u, d)


def test_slots_keep_old_syncs_exponentially() -> None:
    slots = [OffsetSync("t", 0, 0, 0)] * SLOTS
    for i in range(1, 10_000):
        slots = updated(slots, OffsetSync("t", 0, i, i))
    ups = [s.upstream for s in slots]
    assert ups[0] == 9_999
    assert min(ups) < 5_000  # far history kept, not only the latest syncs
    assert len(set(ups)) > 10
