import pytest

from hub.plugins.manager import create_plugin_manager
from hub.plugins.registry import PluginRegistry


@pytest.fixture(autouse=True)
def _no_entrypoints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLUICE_DISABLE_ENTRYPOINTS", "1")


@pytest.fixture
def registry() -> PluginRegistry:
    return create_plugin_manager(load_entrypoints=False)
