from pathlib import Path

import pytest

from broker.log import files


def test_segment_names_are_20_digit_base_offsets() -> None:
    d = Path("/x")
    assert files.log_file(d, 42).name == "00000000000000000042.log"
    assert files.index_file(d, 0).name == "00000000000000000000.index"
    assert files.time_index_file(d, 2**63 - 1).name == "09223372036854775807.timeindex"
    with pytest.raises(ValueError):
        files.filename_prefix(-1)


def test_base_offset_round_trip_and_listing(tmp_path: Path) -> None:
    for base in (300, 0, 20):
        files.log_file(tmp_path, base).touch()
        files.index_file(tmp_path, base).touch()
    (tmp_path / "junk.log").touch()
    assert files.segment_base_offsets(tmp_path) == [0, 20, 300]
    assert files.base_offset_of(files.time_index_file(tmp_path, 7)) == 7
    assert files.base_offset_of(tmp_path / "junk.log") is None


def test_partition_dir_names_allow_dashes_in_topics(tmp_path: Path) -> None:
    assert files.partition_dir(tmp_path, "my-topic", 3).name == "my-topic-3"
    assert files.parse_partition_dir("my-topic-3") == ("my-topic", 3)
    assert files.parse_partition_dir("nodash") is None
    assert files.parse_partition_dir("t-x") is None
