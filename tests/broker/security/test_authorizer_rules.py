"""Every API the broker serves has an authorization decision (``authorizer_rules.RULES``).

A new handler registered without a rule fails here, so no API can be added that silently
skips ACLs; the connection also refuses (CLUSTER_AUTHORIZATION_FAILED) an api key missing from
the table while an authorizer is on.
"""

from __future__ import annotations

import broker.protocol.handlers  # noqa: F401 - registers every handler
from broker.protocol import registry
from broker.security.authorizer_rules import RULES, Checks, InHandler, Open


def test_every_registered_api_has_a_rule() -> None:
    served = {reg.api_key for reg in registry.registrations()}
    missing = sorted(served - RULES.keys())
    assert not missing, f"api keys without an authorization rule: {missing}"


def test_rules_are_real_decisions() -> None:
    for key, rule in RULES.items():
        assert isinstance(rule, Open | Checks | InHandler), key
        if isinstance(rule, Checks):
            assert rule.needs or rule.decide is not None, key
        else:
            assert (rule.why if isinstance(rule, Open) else rule.what).strip(), key
    # Only the handshake APIs that run before authentication are open.
    assert {k for k, r in RULES.items() if isinstance(r, Open)} == {17, 18, 36}
