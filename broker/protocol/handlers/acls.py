"""DescribeAcls (29), CreateAcls (30), DeleteAcls (31): the ACL admin APIs of kafka-acls.sh and
every AdminClient.

Without an authorizer (``authorizer.class.name`` unset) Kafka answers these with
SECURITY_DISABLED; so do we. Who may call them is the rule table's business
(``broker.security.authorizer_rules``: DESCRIBE or ALTER on the cluster). Each creation and each
delete filter succeeds or fails on its own, as in Kafka: an invalid one (UNKNOWN values, a
malformed principal) gets INVALID_REQUEST with the reason and does not stop the others.
v1+ only (v0 predates PREFIXED patterns and kio has no schema for it).
"""

from __future__ import annotations

import logging
from typing import Any

from kio.schema.errors import ErrorCode

from broker.protocol._entities import NO_THROTTLE, build, item_class
from broker.protocol.registry import RequestContext, handles, response_class
from broker.security.acl import (
    AclBinding,
    AclBindingFilter,
    AclError,
    AclOperation,
    PatternType,
    PermissionType,
    ResourceType,
)

log = logging.getLogger(__name__)

_DISABLED = "no authorizer is configured on the broker (authorizer.class.name)"


def _filter(f: Any) -> AclBindingFilter:
    """A request's filter fields -> AclBindingFilter; raises AclError for unknown values."""
    try:
        selector = AclBindingFilter(
            ResourceType(f.resource_type_filter),
            f.resource_name_filter,
            PatternType(f.pattern_type_filter),
            f.principal_filter,
            f.host_filter,
            AclOperation(f.operation),
            PermissionType(f.permission_type),
        )
    except ValueError as exc:
        raise AclError(str(exc)) from None
    selector.validate()
    return selector


@handles(29, 1, 3)
async def describe_acls(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return build(cls, throttle_time=NO_THROTTLE, error_code=ErrorCode.security_disabled,
                     error_message=_DISABLED, resources=())  # fmt: skip
    try:
        found = authorizer.acls(_filter(request))
    except AclError as exc:
        return build(cls, throttle_time=NO_THROTTLE, error_code=ErrorCode.invalid_request,
                     error_message=str(exc), resources=())  # fmt: skip
    resource_cls = item_class(cls, "resources")
    acl_cls = item_class(resource_cls, "acls")
    grouped: dict[tuple[int, str, int], list[AclBinding]] = {}
    for acl in found:
        grouped.setdefault((acl.resource_type, acl.resource_name, acl.pattern_type), []).append(acl)
    resources = tuple(
        build(
            resource_cls, resource_type=rtype, resource_name=name, pattern_type=ptype,
            acls=tuple(
                build(acl_cls, principal=a.principal, host=a.host, operation=a.operation,
                      permission_type=a.permission)
                for a in acls
            ),
        )
        for (rtype, name, ptype), acls in grouped.items()
    )  # fmt: skip
    return build(cls, throttle_time=NO_THROTTLE, error_code=ErrorCode.none, error_message=None,
                 resources=resources)  # fmt: skip


@handles(30, 1, 3)
async def create_acls(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    result_cls = item_class(cls, "results")
    authorizer = ctx.broker.authorizer
    results = []
    valid = []
    for c in request.creations:
        code, message = ErrorCode.none, None
        if authorizer is None:
            code, message = ErrorCode.security_disabled, _DISABLED
        else:
            try:
                acl = AclBinding(
                    ResourceType(c.resource_type), c.resource_name,
                    PatternType(c.resource_pattern_type), c.principal, c.host,
                    AclOperation(c.operation), PermissionType(c.permission_type),
                )  # fmt: skip
                acl.validate()
                valid.append(acl)
            except (ValueError, AclError) as exc:
                code, message = ErrorCode.invalid_request, str(exc)
        results.append(build(result_cls, error_code=code, error_message=message))
    if authorizer is not None and valid:
        authorizer.add(valid)
        failure = await _persist(ctx, valid, [])
        if failure is not None:
            results = [build(result_cls, error_code=ErrorCode.unknown_server_error,
                             error_message=failure) for _ in results]  # fmt: skip
    return build(cls, throttle_time=NO_THROTTLE, results=tuple(results))


async def _persist(
    ctx: RequestContext, adds: list[AclBinding], removes: list[AclBinding]
) -> str | None:
    """Writes a change to the ACL store (acls.json or ZooKeeper); the reason if it failed."""
    store, authorizer = ctx.broker.acl_store, ctx.broker.authorizer
    if store is None or authorizer is None:
        return "the ACL store is not available"
    try:
        await store.apply(adds, removes, authorizer.acls())
    except Exception as exc:
        log.exception("cannot persist an ACL change")
        return f"cannot persist the ACL change: {exc!r}"
    return None


@handles(31, 1, 3)
async def delete_acls(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    result_cls = item_class(cls, "filter_results")
    match_cls = item_class(result_cls, "matching_acls")
    authorizer = ctx.broker.authorizer
    results = []
    for f in request.filters:
        if authorizer is None:
            results.append(build(result_cls, error_code=ErrorCode.security_disabled,
                                 error_message=_DISABLED, matching_acls=()))  # fmt: skip
            continue
        try:
            gone = authorizer.remove(_filter(f))
        except AclError as exc:
            results.append(build(result_cls, error_code=ErrorCode.invalid_request,
                                 error_message=str(exc), matching_acls=()))  # fmt: skip
            continue
        failure = await _persist(ctx, [], gone) if gone else None
        if failure is not None:
            results.append(build(result_cls, error_code=ErrorCode.unknown_server_error,
                                 error_message=failure, matching_acls=()))  # fmt: skip
            continue
        matches = tuple(
            build(match_cls, error_code=ErrorCode.none, error_message=None,
                  resource_type=a.resource_type, resource_name=a.resource_name,
                  pattern_type=a.pattern_type, principal=a.principal, host=a.host,
                  operation=a.operation, permission_type=a.permission)
            for a in gone
        )  # fmt: skip
        results.append(build(result_cls, error_code=ErrorCode.none, error_message=None,
                             matching_acls=matches))  # fmt: skip
    return build(cls, throttle_time=NO_THROTTLE, filter_results=tuple(results))
