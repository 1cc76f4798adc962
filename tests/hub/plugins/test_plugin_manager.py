"""Plugin discovery: built-ins, a third-party plugin, conflicts, entry points, tracing."""

from __future__ import annotations

import inspect
import logging

import pytest

from hub.plugins import hookspecs, manager
from hub.plugins.errors import PluginNotFoundError
from hub.plugins.manager import create_plugin_manager, get_plugin_manager, reset_plugin_manager
from hub.plugins.registry import InvalidPluginError, PluginConflictError, PluginRegistry
from hub.transforms.cast import Cast
from tests.plugins import sample_plugin


def test_builtin_transforms_resolve_by_name_alias_and_variant(registry: PluginRegistry) -> None:
    transforms = registry.transforms()
    for name in ("Cast", "org.apache.kafka.connect.transforms.Cast", "Cast$Key", "Cast$Value"):
        assert transforms[name] is Cast
    assert "org.apache.kafka.connect.transforms.Cast$Value" in transforms
    assert "RegexRouter$Value" not in transforms  # no variants: no $ forms
    expected = {
        "Cast", "DropHeaders", "ExtractField", "Filter", "Flatten", "HeaderFrom", "HoistField",
        "InsertField", "InsertHeader", "MaskField", "RegexRouter", "ReplaceField",
        "TimestampConverter", "TimestampRouter", "ValueToKey", "SetSchemaMetadata",
        "ExtractNewRecordState", "EventRouter",
    }  # fmt: skip
    assert {c.name for c in registry.classes("transform")} == expected


def test_builtin_predicates_and_converters(registry: PluginRegistry) -> None:
    prefix = "org.apache.kafka.connect.transforms.predicates."
    for name in ("TopicNameMatches", "HasHeaderKey", "RecordIsTombstone"):
        assert registry.find("predicate", name) is registry.find("predicate", prefix + name)
    java = {
        "org.apache.kafka.connect.json.JsonConverter": "json",
        "org.apache.kafka.connect.storage.StringConverter": "string",
        "org.apache.kafka.connect.converters.ByteArrayConverter": "bytes",
    }
    for alias, short in java.items():
        assert registry.find("converter", alias).name == short
    simple = registry.find(
        "header_converter", "org.apache.kafka.connect.storage.SimpleHeaderConverter"
    )
    assert simple.name == "simple"


def test_find_spellings_and_not_found(registry: PluginRegistry) -> None:
    assert registry.find("transforms", "cast") is Cast  # plural kind, case-insensitive name
    assert registry.find("transformation", "CAST$VALUE") is Cast
    with pytest.raises(PluginNotFoundError, match=r"no transform plugin named 'Nope'.*Cast"):
        registry.find("transform", "Nope")
    with pytest.raises(ValueError, match="unknown plugin kind"):
        registry.find("widget", "x")


def test_find_transform_variants(registry: PluginRegistry) -> None:
    assert registry.find_transform("org.apache.kafka.connect.transforms.Cast$Key") == (Cast, "key")
    assert registry.find_transform("Cast$Value") == (Cast, "value")
    assert registry.find_transform("Cast") == (Cast, "value")
    assert registry.find_transform("RegexRouter")[1] is None


def test_third_party_plugin_registers_through_the_same_hooks() -> None:
    registry = create_plugin_manager([sample_plugin], load_entrypoints=False)
    assert registry.find("transform", "com.example.Uppercase") is sample_plugin.Uppercase
    assert registry.find("predicate", "IsEven") is sample_plugin.IsEven
    assert registry.find("converter", "rot13") is sample_plugin.Rot13Converter
    assert registry.find("header_converter", "upper") is sample_plugin.UpperHeaderConverter
    assert registry.connectors()["com.example.NullSourceConnector"] is sample_plugin.NullSource
    assert registry.find("transform", "Cast") is Cast  # built-ins still there


def test_register_later_invalidates_caches(registry: PluginRegistry) -> None:
    assert "Uppercase" not in registry.transforms()
    registry.register(sample_plugin)
    assert registry.transforms()["Uppercase"] is sample_plugin.Uppercase
    registry.unregister(sample_plugin)
    assert "Uppercase" not in registry.transforms()


def test_conflicting_names_are_rejected_with_both_classes_named(registry: PluginRegistry) -> None:
    with pytest.raises(PluginConflictError, match="'Cast' is claimed by both") as exc:
        registry.register(sample_plugin.ConflictingPlugin())
    assert "hub.transforms.cast.Cast" in str(exc.value)
    assert "ConflictingPlugin.FakeCast" in str(exc.value)
    assert registry.find("transform", "Cast") is Cast  # rolled back
    with pytest.raises(PluginConflictError):
        create_plugin_manager([sample_plugin.ConflictingPlugin()], load_entrypoints=False)


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (object, "not a Transformation class"),
        ("Cast", "not a Transformation class"),
        (type("Nameless", (Cast,), {"name": ""}), "has no 'name'"),
    ],
)
def test_hooks_returning_non_plugins_are_rejected(
    registry: PluginRegistry, returned: object, message: str
) -> None:
    class Bad:
        def sluice_transforms(self) -> list[object]:
            return [returned]

    with pytest.raises(InvalidPluginError, match=message):
        registry.register(Bad())
    assert registry.find("transform", "Cast") is Cast


def test_same_class_from_two_plugins_is_not_a_conflict(registry: PluginRegistry) -> None:
    class Again:
        def sluice_transforms(self) -> list[type]:
            return [Cast]

    registry.register(Again())
    assert registry.find("transform", "Cast") is Cast


def test_a_builtin_plugin_that_does_not_import_fails_the_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 15: a broken built-in is an error, never a connector silently left out."""
    monkeypatch.setattr(
        manager, "DEFAULT_PLUGINS", (*manager.DEFAULT_PLUGINS, "connectors.nonexistent.plugin")
    )
    with pytest.raises(ModuleNotFoundError, match=r"connectors\.nonexistent"):
        create_plugin_manager(load_entrypoints=False)


def test_entrypoints_follow_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def fake_load(self: object, group: str, name: str | None = None) -> int:
        calls.append(group)
        return 0

    monkeypatch.setattr(manager.SluicePluginManager, "load_setuptools_entrypoints", fake_load)
    monkeypatch.setenv("SLUICE_DISABLE_ENTRYPOINTS", "1")
    create_plugin_manager()
    assert calls == []
    monkeypatch.setenv("SLUICE_DISABLE_ENTRYPOINTS", "0")
    create_plugin_manager()
    assert calls == ["sluice"]


def test_trace_env_logs_hook_calls(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("SLUICE_TRACE_PLUGINS", "1")
    with caplog.at_level(logging.INFO, logger="hub.plugins.trace"):
        create_plugin_manager(load_entrypoints=False)
    text = caplog.text
    assert "hook sluice_transforms called on" in text
    assert "hub.transforms.plugin" in text


def test_get_plugin_manager_is_cached_until_reset() -> None:
    reset_plugin_manager()
    try:
        first = get_plugin_manager()
        assert get_plugin_manager() is first
        reset_plugin_manager()
        assert get_plugin_manager() is not first
    finally:
        reset_plugin_manager()


def test_hookspecs_are_prefixed_typed_and_documented(registry: PluginRegistry) -> None:
    names = [n for n in dir(registry.pm.hook) if not n.startswith("_")]
    assert names, "no hooks registered"
    for name in names:
        assert name.startswith("sluice_"), name
        spec = getattr(hookspecs, name)
        assert inspect.signature(spec).return_annotation != inspect.Signature.empty, name
        doc = inspect.getdoc(spec) or ""
        for part in ("Runs", "Parameters", "Return"):
            assert part in doc, f"{name}: the docstring must say when it runs, params, return"


@pytest.mark.parametrize("kind", ["transform", "predicate", "converter", "header_converter"])
def test_every_builtin_config_model_gives_a_json_schema_form(
    registry: PluginRegistry, kind: str
) -> None:
    for cls in registry.classes(kind):
        schema = cls.config_model.json_schema()
        assert schema["type"] == "object", cls
        for name, prop in schema.get("properties", {}).items():
            if cls.__module__.startswith("hub.transforms"):
                assert prop.get("description"), f"{cls.name}.{name} has no description"
