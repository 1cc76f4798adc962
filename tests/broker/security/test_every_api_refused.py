"""With an authorizer on and no ACL at all, every served API version refuses a principal with
no grants, with Kafka's authorization error codes, and the connection stays usable.

The requests are the ones ``test_every_version`` generates from kio's schemas (one element in
every array, placeholder names). Listing APIs (ListGroups, ListTransactions) answer with
nothing instead of an error, as in Kafka; requests naming a topic by an id the broker does not
know answer UNKNOWN_TOPIC_ID (nothing to authorize). The SASL handshake APIs are open.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kio.schema.api_versions.v3.request import ApiVersionsRequest

from broker.protocol._legacy_schemas import load_request
from tests.broker.protocol.test_every_version import CASES, _instance
from tests.broker.protocol.wire import WireClient
from tests.fixtures.broker import BrokerProcess

AUTHORIZATION_FAILED = {29, 30, 31, 53}  # topic, group, cluster, transactional id
UNKNOWN_TOPIC_ID = 100
LISTINGS = {16: "groups", 66: "transaction_states"}
OPEN = {17, 36}


@pytest.fixture(scope="module")
def locked_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    proc = BrokerProcess(
        tmp_path_factory.mktemp("locked") / "data",
        "--override", "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
    )  # fmt: skip
    proc.start()
    yield proc
    proc.stop()
    assert "handler failed" not in proc.log(), proc.log()[-4000:]


def _codes(entity: Any) -> set[int]:
    out: set[int] = set()
    for f in dataclasses.fields(entity):
        value = getattr(entity, f.name)
        if f.metadata.get("kafka_type") == "error_code":
            out.add(int(value))
        for item in value if isinstance(value, tuple) else (value,):
            if dataclasses.is_dataclass(item):
                out |= _codes(item)
    return out


REFUSABLE = [(k, v) for k, v in CASES if k not in OPEN]


@pytest.mark.parametrize(("api_key", "version"), REFUSABLE,
                         ids=[f"api{k}-v{v}" for k, v in REFUSABLE])  # fmt: skip
def test_refused(locked_broker: BrokerProcess, api_key: int, version: int) -> None:
    request = _instance(load_request(api_key, version), f"gen-{uuid.uuid4().hex[:6]}")
    if getattr(request, "session_id", 0) != 0:  # sessionless, or Fetch stops at the session
        request = dataclasses.replace(request, session_id=0, session_epoch=-1)
    with WireClient(locked_broker.host, locked_broker.port) as client:
        acks_zero = api_key == 0 and request.acks == 0
        client.send(request, expect_response=not acks_zero)
        response = None if acks_zero else client.receive()[1]
        if not acks_zero:
            follow = client.call(ApiVersionsRequest(client_software_name="t",
                                                    client_software_version="1"))  # fmt: skip
            assert follow.error_code == 0
    if response is None:
        return
    if api_key in LISTINGS:
        assert getattr(response, LISTINGS[api_key]) == (), response
        return
    codes = _codes(response)
    assert (
        codes & AUTHORIZATION_FAILED
        or codes == {0, UNKNOWN_TOPIC_ID}
        or codes == {UNKNOWN_TOPIC_ID}
    ), (codes, response)
