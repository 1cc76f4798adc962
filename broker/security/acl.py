"""Kafka's ACL model: resource patterns, access control entries, and the filters that find them.

The numeric values of every enum are the wire values of CreateAcls/DescribeAcls/DeleteAcls (and
of Kafka's Java ``AclOperation``/``ResourceType``/``PatternType``/``AclPermissionType``), so a
request's ``int8`` fields map straight onto them. An :class:`AclBinding` is one ACL as Kafka
stores it: a resource pattern (type, name, LITERAL or PREFIXED) plus an entry (principal, host,
operation, ALLOW or DENY). ``*`` as a LITERAL name, principal (``User:*``) or host matches every
value. Filters follow Kafka's ``AclBindingFilter``: ``None`` and ``ANY`` match everything, and
``PatternType.MATCH`` finds every pattern that would apply to the given name (the literal name,
the literal ``*`` and each prefix of it).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from broker.errors import AclError as AclError

WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class PermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


CLUSTER_NAME = "kafka-cluster"
"""The one CLUSTER resource's name (Kafka's ``Resource.CLUSTER_NAME``)."""

IMPLIED: dict[AclOperation, frozenset[AclOperation]] = {
    AclOperation.DESCRIBE: frozenset(
        {AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER}
    ),
    AclOperation.DESCRIBE_CONFIGS: frozenset({AclOperation.ALTER_CONFIGS}),
}
"""ALLOW of any of these implies ALLOW of the key (Kafka: READ/WRITE/DELETE/ALTER -> DESCRIBE,
ALTER_CONFIGS -> DESCRIBE_CONFIGS). Deny is never implied: DENY READ does not deny DESCRIBE."""


@dataclass(frozen=True, slots=True)
class AclBinding:
    """One ACL: ``principal`` may (ALLOW) or may not (DENY) do ``operation`` from ``host`` on
    the resources ``resource_name`` names under ``pattern_type``."""

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission: PermissionType

    def validate(self) -> None:
        """Refuses what Kafka refuses in CreateAcls: ANY/UNKNOWN/MATCH values, a malformed
        principal, a CLUSTER resource not named ``kafka-cluster``."""
        if self.resource_type in (ResourceType.ANY, ResourceType.UNKNOWN):
            raise AclError(f"resource type {self.resource_type.name} is not a concrete type")
        if self.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
            raise AclError(f"pattern type {self.pattern_type.name} is not LITERAL or PREFIXED")
        if self.operation in (AclOperation.ANY, AclOperation.UNKNOWN):
            raise AclError(f"operation {self.operation.name} is not a concrete operation")
        if self.permission not in (PermissionType.ALLOW, PermissionType.DENY):
            raise AclError(f"permission {self.permission.name} is not ALLOW or DENY")
        if not self.resource_name:
            raise AclError("resource name must not be empty")
        kind, sep, name = self.principal.partition(":")
        if not sep or not kind or not name:
            raise AclError(f"principal {self.principal!r} is not of the form Type:name")
        if not self.host:
            raise AclError("host must not be empty (use * for every host)")
        if self.resource_type == ResourceType.CLUSTER and self.resource_name != CLUSTER_NAME:
            raise AclError(f"a CLUSTER resource is named {CLUSTER_NAME!r}")
        if self.pattern_type == PatternType.PREFIXED and self.resource_name == WILDCARD:
            raise AclError("a PREFIXED pattern may not be '*' (use LITERAL '*')")

    def to_json(self) -> dict[str, object]:
        return {
            "resourceType": self.resource_type.name,
            "name": self.resource_name,
            "patternType": self.pattern_type.name,
            "principal": self.principal,
            "host": self.host,
            "operation": self.operation.name,
            "permissionType": self.permission.name,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> AclBinding:
        return cls(
            ResourceType[str(data["resourceType"])],
            str(data["name"]),
            PatternType[str(data["patternType"])],
            str(data["principal"]),
            str(data["host"]),
            AclOperation[str(data["operation"])],
            PermissionType[str(data["permissionType"])],
        )

    def __str__(self) -> str:
        return (
            f"{self.permission.name} {self.principal} {self.operation.name} from {self.host} on "
            f"{self.resource_type.name}:{self.pattern_type.name}:{self.resource_name}"
        )


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    """What DescribeAcls and DeleteAcls select; ``None``/``ANY`` fields match everything."""

    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission: PermissionType = PermissionType.ANY

    def validate(self) -> None:
        """Refuses UNKNOWN values, which Kafka answers with INVALID_REQUEST."""
        for value in (self.resource_type, self.pattern_type, self.operation, self.permission):
            if value == 0:
                raise AclError(f"filter has an UNKNOWN {type(value).__name__}")

    def matches(self, acl: AclBinding) -> bool:
        if self.resource_type not in (ResourceType.ANY, acl.resource_type):
            return False
        if not self._pattern_matches(acl):
            return False
        if self.principal is not None and self.principal != acl.principal:
            return False
        if self.host is not None and self.host != acl.host:
            return False
        if self.operation not in (AclOperation.ANY, acl.operation):
            return False
        return self.permission in (PermissionType.ANY, acl.permission)

    def _pattern_matches(self, acl: AclBinding) -> bool:
        name = self.resource_name
        if self.pattern_type == PatternType.MATCH:
            if name is None:
                return True
            if acl.pattern_type == PatternType.LITERAL:
                return acl.resource_name in (name, WILDCARD)
            return name.startswith(acl.resource_name)
        if self.pattern_type not in (PatternType.ANY, acl.pattern_type):
            return False
        return name is None or name == acl.resource_name
