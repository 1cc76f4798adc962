"""A Confluent-compatible Schema Registry, served by Sluice on its own port.

Layout: ``formats/`` (Avro, Protobuf, JSON Schema: parsing and compatibility), ``state``
(the ``_schemas`` topic materialised in memory), ``records`` (that topic's key/value JSON),
``registry`` (the operations), ``rest/`` (Confluent's REST API), ``server`` (log + HTTP
listener), ``client`` (a small client the converters and the CLI use), ``cli``
(``sluice schemas``). docs/schema-registry.md describes the behaviour.
"""
