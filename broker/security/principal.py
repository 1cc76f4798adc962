"""The principal a connection acts as, in Kafka's ``Type:name`` form.

Every request carries one (``RequestContext.principal``): ``User:ANONYMOUS`` on a PLAINTEXT
listener, the SASL user name after SaslAuthenticate, the certificate subject with
``ssl.client.auth=required``. ACLs, quotas and audit lines key on it, so it is one small value
type rather than a string that each of them parses.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class KafkaPrincipal:
    """A principal as Kafka writes it in ACLs and ``super.users``: ``User:alice``."""

    principal_type: str
    name: str

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"

    @classmethod
    def parse(cls, text: str) -> KafkaPrincipal:
        """``User:alice`` -> KafkaPrincipal("User", "alice"); refuses text without a type."""
        kind, sep, name = text.partition(":")
        if not sep or not kind or not name:
            raise ValueError(f"principal {text!r} is not of the form Type:name (e.g. User:alice)")
        return cls(kind, name)


ANONYMOUS = KafkaPrincipal("User", "ANONYMOUS")
"""The principal of a connection that did not authenticate (Kafka's name for it)."""
