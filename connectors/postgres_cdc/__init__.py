"""PostgreSQL change data capture: logical decoding with the built-in ``pgoutput`` plugin.

A Debezium-compatible source connector (``postgres-cdc``, alias
``io.debezium.connector.postgresql.PostgresConnector``): consistent initial snapshot, then every
committed change in commit order as Debezium envelopes. See docs/connectors/postgres-cdc.md.
"""
