from __future__ import annotations

import json

import pytest

from tests.spark_pipelines._kafka import create_topic, produce, read_all

pytest.importorskip("pyspark")
pytestmark = pytest.mark.timeout(600)


def _article(i: str, title: str, url: str, author: str, t: str = "10:00:00") -> str:
    return json.dumps(
        {
            "id": i,
            "title": title,
            "url": url,
            "author_id": author,
            "published_at": f"2026-01-01T{t}Z",
        }
    )


def test_articles_are_cleaned_deduplicated_and_enriched(run_once, broker, topic_name, tmp_path):
    raw, out = f"{topic_name}-articles", f"{topic_name}-clean"
    create_topic(broker.bootstrap, raw, 2)
    authors = tmp_path / "authors.csv"
    authors.write_text("author_id,author_name\nu1,Ada\nu2,Brian\n")
    lines = [
        _article("a1", "  Hello  ", "HTTPS://Example.com/A1", "u1"),
        _article(" a1 ", "Hello", "https://example.com/a1", "u1"),  # same after cleaning
        _article("a2", "Second", "https://x.org/2", "u2"),
        _article("a3", "No author", "https://x.org/3", "u9"),
        _article("   ", "no id", "https://x.org/none", "u1"),  # dropped: id required
    ]
    for i, line in enumerate(lines):
        produce(broker.bootstrap, raw, [(None, line)], partition=i % 2)
    config = {
        "input": {"bootstrap_servers": broker.bootstrap, "topics": [raw]},
        "checkpoint_dir": str(tmp_path / "ckpt"),
        "reference": {"format": "csv", "path": str(authors)},
        "output_topic": out,
    }
    run_once("clean_dedupe_enrich", config)
    records = read_all(broker.bootstrap, out)
    got = sorted(
        (k.decode(), v["title"], v["url"], v.get("author_name"))
        for _p, _o, k, raw_v, _h in records
        for v in [json.loads(raw_v)]
    )
    assert got == [
        ("a1", "Hello", "https://example.com/a1", "Ada"),
        ("a2", "Second", "https://x.org/2", "Brian"),
        ("a3", "No author", "https://x.org/3", None),
    ]
