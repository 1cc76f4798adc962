"""Why a cluster listed no ACLs: none, no authorizer, or not allowed to list them.

librdkafka drops the error code of a DescribeAcls answer: SECURITY_DISABLED (no authorizer)
and CLUSTER_AUTHORIZATION_FAILED (the client may not DESCRIBE the cluster) both come back as an
empty list. Kafka's MirrorMaker 2 logs the first once at INFO and fails loudly on the second,
so when confluent-kafka's list is empty the source connector asks again through kafka-python
(a project dependency), which raises them. Only the connection and security settings carry
over; settings kafka-python cannot take (an inline PEM, a mechanism it lacks) make the answer
``unknown`` rather than a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from hub.api import RetriableError

AclAccess = Literal["ok", "disabled", "denied", "unknown"]

_SSL_FILES = {
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
}
_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


def kafka_python_settings(settings: Mapping[str, Any]) -> dict[str, Any] | None:
    """kafka-python keyword arguments for librdkafka ``settings``, or None if a security
    setting has no kafka-python equivalent here."""
    out: dict[str, Any] = {"bootstrap_servers": str(settings["bootstrap.servers"]).split(",")}
    for key, value in settings.items():
        if key == "security.protocol":
            out["security_protocol"] = str(value).upper()
        elif key in ("sasl.mechanism", "sasl.mechanisms"):
            if str(value).upper() not in _MECHANISMS:
                return None
            out["sasl_mechanism"] = str(value).upper()
        elif key == "sasl.username":
            out["sasl_plain_username"] = value
        elif key == "sasl.password":
            out["sasl_plain_password"] = value
        elif key in _SSL_FILES:
            out[_SSL_FILES[key]] = value
        elif key == "ssl.endpoint.identification.algorithm":
            out["ssl_check_hostname"] = str(value).lower() != "none"
        elif key.startswith(("ssl.", "sasl.")):
            return None
    return out


def acl_access(settings: Mapping[str, Any], timeout: float) -> AclAccess:
    """Asks the cluster for its TOPIC ACLs through kafka-python and names the outcome."""
    from kafka.admin import (
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        KafkaAdminClient,
        ResourcePatternFilter,
        ResourceType,
    )
    from kafka.errors import (
        ClusterAuthorizationFailedError,
        KafkaError,
        SecurityDisabledError,
    )

    kwargs = kafka_python_settings(settings)
    if kwargs is None:
        return "unknown"
    topics = ResourcePatternFilter(ResourceType.TOPIC, None, ACLResourcePatternType.ANY)
    selector = ACLFilter(
        principal=None, host=None, operation=ACLOperation.ANY,
        permission_type=ACLPermissionType.ANY, resource_pattern=topics,
    )  # fmt: skip
    try:
        client = KafkaAdminClient(request_timeout_ms=int(timeout * 1000), **kwargs)
    except KafkaError as exc:
        raise RetriableError(f"asking for ACLs failed: {exc}") from None
    try:
        client.describe_acls(selector)
    except SecurityDisabledError:
        return "disabled"
    except ClusterAuthorizationFailedError:
        return "denied"
    except KafkaError as exc:
        raise RetriableError(f"asking for ACLs failed: {exc}") from None
    finally:
        client.close()
    return "ok"
