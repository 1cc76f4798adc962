"""Column rules, regex lists, hashing and config validation without a database.

The hashing cross-check runs the JDK's own ``ObjectOutputStream`` and ``MessageDigest`` (Java
is installed by ``./dev`` for Spark; the check needs the JDK's source launcher, and says so
when it is missing).
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from pathlib import Path

import pytest

from connectors.postgres_cdc._hashing import (
    hashlib_name,
    java_serialized_string,
    modified_utf8,
    salted_hex,
)
from connectors.postgres_cdc._regex_list import compile_list, split_regexes
from connectors.postgres_cdc.columns import ColumnRules, ValueRule, value_rules
from connectors.postgres_cdc.config import PostgresCdcConfig
from hub.api import ConfigError

BASE = {"database.hostname": "h", "database.user": "u", "database.dbname": "d",
        "topic.prefix": "p"}  # fmt: skip
TEXT, VARCHAR, INT4 = 25, 1043, 23


def test_regex_lists_split_like_debezium() -> None:
    assert split_regexes(r"a\.b , c{1\,3}, ,d") == [r"a\.b", "c{1,3}", "d"]
    assert split_regexes("") == [] and split_regexes(None) == []
    with pytest.raises(ValueError, match="escape"):
        split_regexes("a\\")
    (pattern,) = compile_list("public.T")
    assert pattern.fullmatch("PUBLIC.t") and not pattern.fullmatch("public.tt")
    with pytest.raises(ValueError, match="not a valid regular expression"):
        compile_list("a(")


def test_value_rules_precedence_and_effects() -> None:
    raw = {"column.mask.hash.v2.MD5.with.salt.s": "s.t.a", "column.mask.with.2.chars": "s.t.a",
           "column.truncate.to.3.chars": "s.t.b,s.t.c", "other": "x"}  # fmt: skip
    rules, problems = value_rules(raw)
    assert problems == {}
    assert [r.kind for _, r in rules] == ["truncate", "mask", "hash"]
    cols = [("a", TEXT, -1), ("b", VARCHAR, 4 + 2), ("c", TEXT, -1), ("d", INT4, -1)]
    table = ColumnRules(value_rules=rules).for_table("s", "t", cols)
    assert table is not None and table.key_names is None
    assert table.project({"a": None, "b": "xy", "c": "abcd", "d": 4}) == {
        "a": "**",
        "b": "xy",
        "c": "abc",
        "d": 4,
    }
    assert table.parameters == {"a": {"masked": "true"}, "c": {"truncateLength": "3"}}
    assert ColumnRules().for_table("s", "t", cols) is None  # nothing configured: no rewrite


def test_mask_and_hash_touch_character_columns_only() -> None:
    assert ValueRule("mask", 3).converter(INT4, -1) is None
    hashed = ValueRule("hash", 0, "sha256", b"salt").converter(VARCHAR, 4 + 8)
    assert hashed is not None and hashed(None) is None
    assert hashed("hello") == "af5843a0"  # cut to varchar(8)
    truncate = ValueRule("truncate", 2).converter(INT4, -1)
    assert truncate is not None and truncate(b"abc") == b"ab" and truncate(12345) == 12345


def test_column_filters_and_key_rules() -> None:
    cols = [("id", INT4, -1), ("Name", TEXT, -1), ("secret", TEXT, -1)]
    table = ColumnRules(exclude=r"s\.t\.secret", key_columns="S.T:name").for_table("s", "t", cols)
    assert table is not None
    assert table.value_names == ("id", "Name") and table.key_names == ("Name",)
    include = ColumnRules(include=r"s\.t\.id").for_table("s", "t", cols)
    assert include is not None and include.value_names == ("id",)


def test_debezium_hash_vectors() -> None:
    # Debezium's MaskStringsTest: salt "salt"
    assert salted_hex("sha256", b"salt", "hello", False).startswith("af5843a0f0e728ab")
    assert salted_hex("md5", b"salt", "world", False) == "030f632140d9c9591b0d8c21098024b8"
    assert salted_hex("sha256", b"salt", "hello", True).startswith("cd31b3b98ece60cb")
    assert salted_hex("md5", b"salt", "world", True) == "172c8e95398cc72ab5358ead6981e7e5"
    assert modified_utf8("a\x00é😀") == b"a\xc0\x80\xc3\xa9\xed\xa0\xbd\xed\xb8\x80"
    assert java_serialized_string("x" * 70000)[4:5] == b"\x7c"  # TC_LONGSTRING
    assert hashlib_name("sha-256") == "sha256" and hashlib_name("SHA") == "sha1"
    with pytest.raises(ValueError, match="MD2"):
        hashlib_name("MD2")


_JAVA = """
import java.io.*; import java.security.MessageDigest; import java.util.HexFormat;
public class HashCheck { public static void main(String[] a) throws Exception {
  BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
  for (String line; (line = in.readLine()) != null; ) {
    String value = new String(HexFormat.of().parseHex(line), "UTF-8");
    ByteArrayOutputStream bos = new ByteArrayOutputStream();
    ObjectOutputStream out = new ObjectOutputStream(bos); out.writeObject(value); out.flush();
    MessageDigest md = MessageDigest.getInstance("SHA-256"); md.update("pepper".getBytes("UTF-8"));
    System.out.println(HexFormat.of().formatHex(md.digest(bos.toByteArray())));
  } } }
"""


def test_v1_hashes_match_the_jdk(tmp_path: Path) -> None:
    java = shutil.which("java")
    if java is None:
        pytest.fail("java is not installed: run ./dev (it installs a JRE for Spark)")
    modules = subprocess.run([java, "--list-modules"], capture_output=True, text=True).stdout
    if "jdk.compiler" not in modules:
        pytest.skip("this JRE has no source launcher (jdk.compiler); the Debezium vectors "
                    "above still check the v1 bytes")  # fmt: skip
    source = tmp_path / "HashCheck.java"
    source.write_text(_JAVA)
    values = ["", "plain", "é ü ß", "😀 beyond the BMP", "nul\x00inside", "x" * 70_000]
    done = subprocess.run([java, str(source)], input="\n".join(v.encode().hex() for v in values),
                          capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    expected = done.stdout.split()
    assert expected == [salted_hex("sha256", b"pepper", v, False) for v in values]


def test_config_rejects_known_unsupported_keys_by_name(caplog) -> None:
    with pytest.raises(ConfigError) as info:
        PostgresCdcConfig.parse({
            **BASE, "hstore.handling.mode": "map", "signal.data.collection": "x",
            "connector.plugin.version": "1", "producer.override.acks": "1",
            "database.initial.statements": "x", "time.precision.mode": "connect",
            "custom.thing": "kept",
        })  # fmt: skip
    errors = info.value.errors
    assert set(errors) == {"hstore.handling.mode", "signal.data.collection",
                           "connector.plugin.version", "producer.override.acks",
                           "database.initial.statements", "time.precision.mode"}  # fmt: skip
    assert "does not support" in errors["hstore.handling.mode"][0]
    assert "adaptive" in errors["time.precision.mode"][0]
    with caplog.at_level(logging.WARNING):
        config = PostgresCdcConfig.parse({**BASE, "max.queue.size": "8192",
                                          "time.precision.mode": "adaptive",
                                          "custom.thing": "kept"})  # fmt: skip
    assert "max.queue.size" in caplog.text and config.raw()["custom.thing"] == "kept"


def test_config_cross_key_rules() -> None:
    with pytest.raises(ConfigError) as info:
        PostgresCdcConfig.parse({**BASE, "column.include.list": "a", "column.exclude.list": "b",
                                 "table.include.list": "a", "table.exclude.list": "b",
                                 "message.key.columns": "no-colon",
                                 "column.mask.hash.MD2.with.salt.x": "s.t.c"})  # fmt: skip
    assert set(info.value.errors) == {
        "column.exclude.list",
        "table.exclude.list",
        "message.key.columns",
        "column.mask.hash.MD2.with.salt.x",
    }
    with pytest.raises(ConfigError) as info:
        PostgresCdcConfig.parse({**BASE, "snapshot.mode": "custom"})
    assert "Java" in info.value.errors["snapshot.mode"][0]
    with pytest.raises(ConfigError) as info:
        PostgresCdcConfig.parse({**BASE, "column.exclude.list": "ok,bad("})
    assert "bad(" in info.value.errors["column.exclude.list"][0]
    config = PostgresCdcConfig.parse({**BASE, "snapshot.mode": "Always",
                                      "topic.heartbeat.prefix": "hb"})  # fmt: skip
    assert (config.snapshot_mode, config.heartbeat_topics_prefix) == ("always", "hb")
    assert (
        "sslrootcert='/ca.pem'"
        in PostgresCdcConfig.parse(
            {**BASE, "database.sslrootcert": "/ca.pem", "database.tcpKeepAlive": "false"}
        ).conninfo()
    )
