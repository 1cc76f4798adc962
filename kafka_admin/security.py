"""The cluster's security settings an operator manages: ACLs, SCRAM users and client quotas.

ACLs (CreateAcls/DescribeAcls/DeleteAcls) and SCRAM credentials (KIP-554's
DescribeUserScramCredentials/AlterUserScramCredentials) go through confluent-kafka's
``AdminClient``; client quotas (KIP-546's DescribeClientQuotas/AlterClientQuotas) through
kafka-python, since confluent-kafka has no quota API. So this works against Sluice's broker
and any Kafka cluster. Rows are plain dicts in Kafka's own words (``TOPIC``, ``PREFIXED``,
``User:alice``) so a UI can show them as ``kafka-acls.sh`` does.

Secrets only go one way: a password is sent to the broker (which stores a salted PBKDF2 hash)
and never returned, logged or put in an error message. Users are listed with their mechanisms
and iterations only.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

from kafka_admin.client import KafkaAdmin
from kafka_admin.transactions import kafka_python_client

RESOURCE_TYPES = ("TOPIC", "GROUP", "TRANSACTIONAL_ID", "CLUSTER")
PATTERN_TYPES = ("LITERAL", "PREFIXED")
OPERATIONS = (
    "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION",
    "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE",
)  # fmt: skip
PERMISSIONS = ("ALLOW", "DENY")
MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
QUOTA_KEYS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage")
CLUSTER_NAME = "kafka-cluster"
"""The one name of the cluster resource (confluent-kafka calls its type BROKER)."""


def _choice(value: Any, allowed: tuple[str, ...], what: str) -> str:
    text = str(value or "").strip().upper().replace("-", "_")
    if text not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(allowed)}, not {value!r}")
    return text


def _rtype(name: str) -> ResourceType:
    return ResourceType.BROKER if name == "CLUSTER" else ResourceType[name]


def _rtype_name(rtype: ResourceType) -> str:
    return "CLUSTER" if rtype == ResourceType.BROKER else rtype.name


def _binding(spec: dict[str, Any]) -> AclBinding:
    """An exact ACL from ``{"resource_type", "resource_name", "pattern_type", "principal",
    "host", "operation", "permission"}``; ``ValueError`` names the first bad field."""
    rtype = _choice(spec.get("resource_type"), RESOURCE_TYPES, "resource_type")
    name = CLUSTER_NAME if rtype == "CLUSTER" else str(spec.get("resource_name") or "").strip()
    if not name:
        raise ValueError("resource_name is required (* for every resource of the type)")
    principal = str(spec.get("principal") or "").strip()
    if ":" not in principal or not principal.split(":", 1)[1]:
        raise ValueError(f"principal must look like User:NAME, not {principal!r}")
    return AclBinding(
        _rtype(rtype), name,
        ResourcePatternType[_choice(spec.get("pattern_type") or "LITERAL", PATTERN_TYPES,
                                    "pattern_type")],
        principal, str(spec.get("host") or "*").strip() or "*",
        AclOperation[_choice(spec.get("operation"), OPERATIONS, "operation")],
        AclPermissionType[_choice(spec.get("permission") or "ALLOW", PERMISSIONS, "permission")],
    )  # fmt: skip


def _row(binding: AclBinding) -> dict[str, Any]:
    b: Any = binding  # its stubs type the fields as "enum | str | int"; set, they are enums
    return {
        "resource_type": _rtype_name(b.restype), "resource_name": b.name,
        "pattern_type": b.resource_pattern_type.name, "principal": b.principal, "host": b.host,
        "operation": b.operation.name, "permission": b.permission_type.name,
    }  # fmt: skip


def authorizer_enabled(admin: KafkaAdmin) -> bool:
    """Whether the cluster has an authorizer (``authorizer.class.name``). Without one Kafka
    answers DescribeAcls with SECURITY_DISABLED, which librdkafka drops (an empty list comes
    back), so this asks through kafka-python, which raises it."""
    from kafka.admin import ACLFilter, ACLOperation, ACLPermissionType, ResourcePatternFilter
    from kafka.admin import ACLResourcePatternType as Pattern
    from kafka.admin import ResourceType as Kind
    from kafka.errors import SecurityDisabledError

    selector = ACLFilter(
        principal=None, host=None, operation=ACLOperation.ANY,
        permission_type=ACLPermissionType.ANY,
        resource_pattern=ResourcePatternFilter(Kind.ANY, None, Pattern.ANY),
    )  # fmt: skip
    with kafka_python_client(admin) as client:
        try:
            client.describe_acls(selector)
        except SecurityDisabledError:
            return False
    return True


def list_acls(admin: KafkaAdmin, principal: str | None = None) -> list[dict[str, Any]]:
    """Every ACL (of ``principal`` only, when given), sorted by resource then principal."""
    make: Any = AclBindingFilter  # its stubs say str where the API takes None (= any)
    selector = make(
        ResourceType.ANY, None, ResourcePatternType.ANY, principal or None, None,
        AclOperation.ANY, AclPermissionType.ANY,
    )  # fmt: skip
    found = admin.admin.describe_acls(selector, request_timeout=admin.timeout)
    rows = [_row(b) for b in found.result(admin.timeout)]
    order = ("resource_type", "resource_name", "pattern_type", "principal", "operation")
    return sorted(rows, key=lambda r: tuple(r[k] for k in order))


def create_acl(admin: KafkaAdmin, spec: dict[str, Any]) -> dict[str, Any]:
    """Adds one ACL; returns it as listed."""
    binding = _binding(spec)
    for future in admin.admin.create_acls([binding], request_timeout=admin.timeout).values():
        future.result(admin.timeout)
    return _row(binding)


def delete_acl(admin: KafkaAdmin, spec: dict[str, Any]) -> int:
    """Removes exactly the ACL ``spec`` names (no wildcards); how many the broker removed."""
    b = _binding(spec)
    exact = AclBindingFilter(
        b.restype, b.name, b.resource_pattern_type, b.principal, b.host, b.operation,
        b.permission_type,
    )  # fmt: skip
    removed = 0
    for future in admin.admin.delete_acls([exact], request_timeout=admin.timeout).values():
        removed += len(future.result(admin.timeout))
    return removed


# -- SCRAM users --------------------------------------------------------------------------------
def _mechanism(name: str) -> ScramMechanism:
    return ScramMechanism[
        _choice(name, tuple(m.replace("-", "_") for m in MECHANISMS), "mechanism")
    ]


def list_users(admin: KafkaAdmin) -> list[dict[str, Any]]:
    """``[{"user", "mechanisms": [{"mechanism", "iterations"}]}]``: never salts or keys."""
    try:
        result: Any = admin.admin.describe_user_scram_credentials(
            None, request_timeout=admin.timeout
        )
        described = result.result(admin.timeout)
    except KafkaException as exc:
        err = exc.args[0] if exc.args else None
        if isinstance(err, KafkaError) and err.code() == KafkaError.RESOURCE_NOT_FOUND:
            return []  # no user has credentials
        raise
    return [
        {"user": name, "mechanisms": [
            {"mechanism": i.mechanism.name.replace("_", "-"), "iterations": i.iterations}
            for i in described[name].scram_credential_infos
        ]}
        for name in sorted(described)
    ]  # fmt: skip


def set_user(
    admin: KafkaAdmin, user: str, password: str, mechanisms: list[str], iterations: int = 8192
) -> None:
    """Creates the user or replaces its password, for each mechanism (default: both)."""
    if not user.strip():
        raise ValueError("user is required")
    if not password:
        raise ValueError("password is required")
    if not 4096 <= iterations <= 16384:
        raise ValueError("iterations must be between 4096 and 16384")
    upserts: list[Any] = [
        UserScramCredentialUpsertion(
            user, ScramCredentialInfo(_mechanism(m), iterations), password.encode()
        )
        for m in (mechanisms or MECHANISMS)
    ]
    for future in admin.admin.alter_user_scram_credentials(
        upserts, request_timeout=admin.timeout
    ).values():
        future.result(admin.timeout)


def delete_user(admin: KafkaAdmin, user: str) -> list[str]:
    """Deletes every SCRAM credential of ``user``; the mechanisms removed (``LookupError``
    when it has none)."""
    have = next((u for u in list_users(admin) if u["user"] == user), None)
    if have is None:
        raise LookupError(f"User {user} has no SCRAM credentials")
    names = [m["mechanism"] for m in have["mechanisms"]]
    deletions: list[Any] = [UserScramCredentialDeletion(user, _mechanism(m)) for m in names]
    for future in admin.admin.alter_user_scram_credentials(
        deletions, request_timeout=admin.timeout
    ).values():
        future.result(admin.timeout)
    return names


# -- client quotas ------------------------------------------------------------------------------
def _send(client: Any, request: Any) -> Any:
    return client._manager.run(client._manager.send, request)


def _entity(entity: dict[str, Any]) -> list[tuple[str, str | None]]:
    """``{"user"?, "client_id"?}`` -> Kafka's entity parts; ``""`` means the default entity
    (``<default>``), a missing key means the part is not in the entity."""
    parts: list[tuple[str, str | None]] = []
    for key, etype in (("user", "user"), ("client_id", "client-id")):
        if key in entity and entity[key] is not None:
            parts.append((etype, str(entity[key]) or None))
    if not parts:
        raise ValueError('name a user and/or a client_id ("" for the default one)')
    return parts


def list_quotas(admin: KafkaAdmin) -> list[dict[str, Any]]:
    """``[{"user", "client_id", "quotas": {key: value}}]``: ``user``/``client_id`` is None when
    the entity has no such part and ``""`` for the default entity."""
    from kafka.protocol.admin.client_quotas import DescribeClientQuotasRequest as Request

    with kafka_python_client(admin) as client:
        answer = _send(client, Request(components=[], strict=False))
    if answer.error_code:
        raise ValueError(f"DescribeClientQuotas: {answer.error_message or answer.error_code}")
    rows = []
    for entry in answer.entries or ():
        names = {e.entity_type: e.entity_name or "" for e in entry.entity}
        rows.append({
            "user": names.get("user"), "client_id": names.get("client-id"),
            "quotas": {v.key: v.value for v in entry.values},
        })  # fmt: skip
    return sorted(rows, key=lambda r: (r["user"] or "", r["client_id"] or ""))


def alter_quotas(
    admin: KafkaAdmin, entity: dict[str, Any], set_: dict[str, Any], remove: list[str]
) -> None:
    """Sets ``set_`` ({key: number}) and removes ``remove`` on one entity."""
    from kafka.protocol.admin.client_quotas import AlterClientQuotasRequest as Request

    parts = _entity(entity)
    op = Request.EntryData.OpData
    ops = []
    for key, value in set_.items():
        if key not in QUOTA_KEYS:
            raise ValueError(f"quota must be one of {', '.join(QUOTA_KEYS)}, not {key!r}")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{key} must be a number, not {value!r}") from None
        if number <= 0:
            raise ValueError(f"{key} must be positive (remove the quota to lift it)")
        ops.append(op(key=key, value=number, remove=False))
    for key in remove:
        if key not in QUOTA_KEYS:
            raise ValueError(f"quota must be one of {', '.join(QUOTA_KEYS)}, not {key!r}")
        ops.append(op(key=key, value=0.0, remove=True))
    if not ops:
        raise ValueError("nothing to change: set or remove a quota")
    data = [Request.EntryData.EntityData(entity_type=t, entity_name=n) for t, n in parts]
    request = Request(entries=[Request.EntryData(entity=data, ops=ops)], validate_only=False)
    with kafka_python_client(admin) as client:
        answer = _send(client, request)
    for entry in answer.entries:
        if entry.error_code:
            raise ValueError(f"AlterClientQuotas: {entry.error_message or entry.error_code}")
