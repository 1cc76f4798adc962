"""The warehouse sink: topics into SQL tables via SQLAlchemy (docs/connectors/warehouse.md)."""
