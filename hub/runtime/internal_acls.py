"""ACLs that keep the hub's internal topics to the hub (docs/security.md).

Four records in the config topic create a connector, so when the cluster enforces ACLs the
worker grants its own principal what it needs, on the exact names it uses: ALL on the config,
offset and status topics (and ``_schemas`` when it serves the schema registry), on its group,
and on the transactional ids of its exactly-once source tasks (``<group.id>-`` prefix). Its
idempotent producers need no cluster ACL (KIP-679: WRITE on a topic is enough), which would
otherwise take cluster-wide rights from everyone else. An ACL on a resource means "only those
named", so with ``allow.everyone.if.no.acl.found=true`` these also close the topics to
everyone else; nobody else is granted anything.

The principal is the one the cluster sees: ``User:<sasl.username>`` over SASL, the client
certificate's subject over SSL. A worker that connects without authentication is
``User:ANONYMOUS``, shared by every unauthenticated client, so nothing is granted and a WARNING
says the topics stay open. Without an authorizer (SECURITY_DISABLED)
nothing is done (asked with a DeleteAcls filter that matches nothing: librdkafka does not
report DescribeAcls' SECURITY_DISABLED). Creating an ACL that exists changes nothing, so
every start repeats it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

log = logging.getLogger(__name__)

_SECURITY_DISABLED = 54
TIMEOUT_S = 15.0


def hub_principal(client: Mapping[str, Any]) -> str | None:
    """``User:<name>`` the cluster will see for these librdkafka settings; None: anonymous."""
    protocol = str(client.get("security.protocol", "PLAINTEXT")).upper()
    if protocol.startswith("SASL") and client.get("sasl.username"):
        return f"User:{client['sasl.username']}"
    location = client.get("ssl.certificate.location")
    if protocol == "SSL" and location:
        from cryptography import x509

        with open(location, "rb") as fh:
            cert = x509.load_pem_x509_certificate(fh.read())
        return f"User:{cert.subject.rfc4514_string()}"
    return None


def bindings(principal: str, topics: Iterable[str], group_id: str) -> list[Any]:
    """The ALLOW bindings the hub needs (confluent-kafka ``AclBinding``s)."""
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    allow, literal = AclPermissionType.ALLOW, ResourcePatternType.LITERAL
    out = [
        AclBinding(ResourceType.TOPIC, topic, literal, principal, "*", AclOperation.ALL, allow)
        for topic in topics
    ]
    out.append(
        AclBinding(ResourceType.GROUP, group_id, literal, principal, "*", AclOperation.ALL, allow)
    )
    out.append(
        AclBinding(ResourceType.TRANSACTIONAL_ID, f"{group_id}-", ResourcePatternType.PREFIXED,
                   principal, "*", AclOperation.ALL, allow)
    )  # fmt: skip
    return out


def protect_internal_topics(
    client: Mapping[str, Any], topics: Iterable[str], group_id: str
) -> list[str]:
    """Creates the hub's ACLs when the cluster has an authorizer; returns the topics it
    protected ([] when there is no authorizer or the hub is anonymous)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
        ResourceType,
    )

    topics = list(topics)
    settings = {k: v for k, v in client.items() if k != "logger"}
    admin = AdminClient(settings)
    # Is there an authorizer? librdkafka hides DescribeAcls' top-level SECURITY_DISABLED, so
    # ask with a DeleteAcls filter that matches nothing: its per-filter error is reported.
    probe = AclBindingFilter(ResourceType.TOPIC, "__sluice-authorizer-probe",
                             ResourcePatternType.LITERAL, "User:__sluice-nobody__", "*",
                             AclOperation.ANY, AclPermissionType.ANY)  # fmt: skip
    try:
        admin.delete_acls([probe], request_timeout=TIMEOUT_S)[probe].result(TIMEOUT_S)
    except KafkaException as exc:
        if exc.args[0].code() == _SECURITY_DISABLED:
            log.debug("no authorizer: internal topics need no ACLs")
            return []
        raise RuntimeError(
            f"cannot manage the cluster's ACLs to protect the internal topics: {exc.args[0]} "
            "(the hub needs ALTER on the cluster, or to be in super.users)"
        ) from None
    principal = hub_principal(settings)
    if principal is None:
        log.warning(
            "the cluster enforces ACLs but the hub connects without authentication, so its "
            "internal topics cannot be reserved to it; give the worker SASL or a client "
            "certificate (docs/security.md)",
            extra={"topics": ",".join(topics)},
        )
        return []
    futures = admin.create_acls(bindings(principal, topics, group_id), request_timeout=TIMEOUT_S)
    for future in futures.values():
        try:
            future.result(TIMEOUT_S)
        except KafkaException as exc:
            raise RuntimeError(
                f"cannot create the ACLs of the hub's internal topics for {principal}: "
                f"{exc.args[0]} (the hub needs ALTER on the cluster, or to be in super.users)"
            ) from None
    log.info(
        "internal topics reserved to the hub",
        extra={"principal": principal, "topics": ",".join(topics)},
    )
    return topics
