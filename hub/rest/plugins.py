"""``/connector-plugins``: what can be configured, and checking a config before creating it.

Validation answers 200 even for an invalid config (``error_count`` > 0 and per-key ``errors``),
as Connect does, so a UI can validate on every keystroke without treating it as a failure.
Values of PASSWORD-type keys come back as ``[hidden]``, as in Connect.
A config sent for validation without ``connector.class`` gets the plugin from the path.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query

from hub.rest._deps import HerderDep
from hub.rest.masking import HIDDEN, client_secret
from hub.rest.models import (
    ERRORS,
    ConfigInfos,
    ConfigKeyInfo,
    ConnectorConfig,
    PluginInfo,
    documented,
)

router = APIRouter(prefix="/connector-plugins", tags=["plugins"])


@router.get(
    "",
    summary="Installed plugins (connectorsOnly=false adds transforms, converters, predicates)",
    response_model=None,
    responses={200: documented(list[PluginInfo], "class, type and version."), **ERRORS},
)
def list_plugins(
    herder: HerderDep,
    connectors_only: Annotated[bool, Query(alias="connectorsOnly")] = True,
) -> list[dict[str, Any]]:
    return list(herder.plugins(connectors_only))


@router.get(
    "/{plugin}/config",
    summary="A plugin's config keys",
    response_model=None,
    responses={200: documented(list[ConfigKeyInfo], "One entry per key."), **ERRORS},
)
def plugin_config(herder: HerderDep, plugin: str) -> list[dict[str, Any]]:
    return list(herder.plugin_config(plugin))


@router.put(
    "/{plugin}/config/validate",
    summary="Validate a config against a connector plugin",
    response_model=None,
    responses={200: documented(ConfigInfos, "Per-key values, errors, recommendations."), **ERRORS},
)
def validate(
    herder: HerderDep, plugin: str, config: Annotated[ConnectorConfig, Body()]
) -> dict[str, Any]:
    result: dict[str, Any] = herder.validate_config(plugin, {"connector.class": plugin, **config})
    for entry in result.get("configs") or ():  # secrets as Connect shows them: [hidden]
        definition, value = entry.get("definition") or {}, entry.get("value") or {}
        secret = definition.get("type") == "PASSWORD" or client_secret(str(value.get("name")))
        if secret and value.get("value") not in (None, ""):
            value["value"] = HIDDEN
    return result
