"""The Kafka-compatible commit-log broker: storage (``log``), wire protocol (``protocol``) and
consumer-group coordination (``coordinator``)."""
