from tests.fixtures.broker import api_versions_ok


def test_broker_answers(broker):
    assert api_versions_ok(broker.host, broker.port)
