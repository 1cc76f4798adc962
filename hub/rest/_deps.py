"""How routers reach the herder (and the app's secret-key lookup): they hang off ``app.state``
so one module-level router serves every app (tests build many apps, each with its own herder)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from hub.rest.masking import SecretKeys


def _herder(request: Request) -> Any:
    return request.app.state.herder


HerderDep = Annotated[Any, Depends(_herder)]


def _secrets(request: Request) -> SecretKeys:
    state = request.app.state
    keys: SecretKeys | None = getattr(state, "secret_keys", None)
    if keys is None or keys.herder is not state.herder:  # tests swap herders on one app
        keys = state.secret_keys = SecretKeys(state.herder)
    return keys


SecretsDep = Annotated[SecretKeys, Depends(_secrets)]
