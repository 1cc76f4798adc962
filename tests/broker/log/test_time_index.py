from pathlib import Path

from broker.log.time_index import TimeIndex


def test_only_growing_timestamps_are_kept_and_lookup_is_strict(tmp_path: Path) -> None:
    index = TimeIndex(tmp_path / "x.timeindex", 1 << 10, base_offset=50)
    index.maybe_append(1000, 50)
    index.maybe_append(900, 55)  # clock went backwards: not an entry
    index.maybe_append(2000, 60)
    assert index.entries() == [(1000, 50), (2000, 60)]
    assert index.lookup(1000) == 50  # strict: batches up to the entry are < target
    assert index.lookup(1001) == 50
    assert index.lookup(2001) == 60
    assert index.max_entry() == (2000, 60)


def test_round_trip_and_truncate(tmp_path: Path) -> None:
    path = tmp_path / "x.timeindex"
    index = TimeIndex(path, 1 << 10, base_offset=50)
    index.maybe_append(5, 51)
    index.maybe_append(6, 53)
    index.close()
    assert path.read_bytes()[:12] == bytes.fromhex("0000000000000005 00000001")
    loaded = TimeIndex.load(path, 1 << 10, 50)
    loaded.truncate_to_offset(53)
    assert loaded.entries() == [(5, 51)]
