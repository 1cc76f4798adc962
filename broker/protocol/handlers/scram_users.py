"""DescribeUserScramCredentials (key 50) and AlterUserScramCredentials (key 51), KIP-554.

The client salts and hashes the password (``salted_password``); the broker derives and keeps
StoredKey and ServerKey only (``broker.security.scram``), in its data dir or, in cluster mode,
in ZooKeeper so that every broker authenticates the same users. Kafka's per-user rules: an
unknown mechanism is UNSUPPORTED_SASL_MECHANISM, iterations outside [4096, 16384] or an empty
user name UNACCEPTABLE_CREDENTIAL, one user and mechanism twice in a request DUPLICATE_RESOURCE,
deleting a credential that does not exist RESOURCE_NOT_FOUND; describing an unknown user is
RESOURCE_NOT_FOUND. Results never contain salts or keys, only mechanism and iterations.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from kio.schema.errors import ErrorCode

from broker.protocol._entities import NO_THROTTLE, build, nested
from broker.protocol.registry import RequestContext, handles, response_class
from broker.security.scram import (
    MAX_ITERATIONS,
    MECHANISM_TYPES,
    MIN_ITERATIONS,
    ScramCredential,
)

_BY_TYPE = {v: k for k, v in MECHANISM_TYPES.items()}


@handles(50, 0, 0)
async def describe_user_scram_credentials(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    result_cls = nested(cls, "DescribeUserScramCredentialsResult")
    info_cls = nested(cls, "CredentialInfo")
    store = ctx.broker.scram
    users = store.users() if store is not None else {}
    wanted = [u.name for u in request.users] if request.users else sorted(users)
    results = []
    for name, count in Counter(wanted).items():
        creds = users.get(name)
        if count > 1:
            code, message = ErrorCode.duplicate_resource, f"user {name} is listed twice"
        elif not creds:
            code, message = ErrorCode.resource_not_found, f"no SCRAM credential for {name}"
        else:
            code, message = ErrorCode.none, None
        infos = tuple(
            build(info_cls, mechanism=MECHANISM_TYPES[m], iterations=c.iterations)
            for m, c in sorted((creds or {}).items())
        ) if code == ErrorCode.none else ()  # fmt: skip
        results.append(build(result_cls, user=name, error_code=code, error_message=message,
                             credential_infos=infos))  # fmt: skip
    return build(cls, throttle_time=NO_THROTTLE, error_code=ErrorCode.none, error_message=None,
                 results=tuple(results))  # fmt: skip


@handles(51, 0, 0)
async def alter_user_scram_credentials(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    result_cls = nested(cls, "AlterUserScramCredentialsResult")
    store = ctx.broker.scram
    items = [*request.deletions, *request.upsertions]
    pairs = Counter((item.name, item.mechanism) for item in items)
    names = dict.fromkeys(item.name for item in items)
    errors: dict[str, tuple[ErrorCode, str]] = {}
    upserts: dict[tuple[str, str], ScramCredential] = {}
    deletes: set[tuple[str, str]] = set()
    existing = store.users() if store is not None else {}
    for item in items:
        name = item.name
        mechanism = _BY_TYPE.get(item.mechanism)
        if name in errors:
            continue
        if pairs[(name, item.mechanism)] > 1:
            errors[name] = (ErrorCode.duplicate_resource,
                            f"user {name}'s {mechanism} credential is altered twice")  # fmt: skip
        elif store is None:
            errors[name] = (ErrorCode.unsupported_version, "this broker keeps no SCRAM users")
        elif not name:
            errors[name] = (ErrorCode.unacceptable_credential, "the user name is empty")
        elif mechanism is None:
            errors[name] = (ErrorCode.unsupported_sasl_mechanism,
                            f"unknown SCRAM mechanism {item.mechanism}")  # fmt: skip
        elif hasattr(item, "salted_password"):
            if not MIN_ITERATIONS <= item.iterations <= MAX_ITERATIONS:
                errors[name] = (
                    ErrorCode.unacceptable_credential,
                    f"iterations must be within [{MIN_ITERATIONS}, {MAX_ITERATIONS}]",
                )
            elif not item.salt or not item.salted_password:
                errors[name] = (ErrorCode.unacceptable_credential, "empty salt or password")
            else:
                upserts[(name, mechanism)] = ScramCredential.from_salted_password(
                    mechanism, item.salted_password, item.salt, item.iterations
                )
        elif mechanism not in existing.get(name, {}):
            errors[name] = (ErrorCode.resource_not_found,
                            f"no {mechanism} credential for {name}")  # fmt: skip
        else:
            deletes.add((name, mechanism))
    upserts = {k: v for k, v in upserts.items() if k[0] not in errors}
    deletes = {k for k in deletes if k[0] not in errors}
    if store is not None and (upserts or deletes):
        await asyncio.get_running_loop().run_in_executor(None, store.alter, upserts, deletes)
    results = tuple(
        build(result_cls, user=name, error_code=errors.get(name, (ErrorCode.none, None))[0],
              error_message=errors.get(name, (ErrorCode.none, None))[1])
        for name in names
    )  # fmt: skip
    return build(cls, throttle_time=NO_THROTTLE, results=results)
