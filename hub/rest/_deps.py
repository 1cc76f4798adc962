"""How routers reach the herder: it hangs off ``app.state`` so one module-level router serves
every app (tests build many apps, each with its own herder)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request


def _herder(request: Request) -> Any:
    return request.app.state.herder


HerderDep = Annotated[Any, Depends(_herder)]
