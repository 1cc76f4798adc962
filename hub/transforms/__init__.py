"""Built-in Single Message Transforms and predicates, with Kafka Connect's names and keys.

Each transform works on schemaless data (dict values) and on data with a Connect schema, and in
the latter case updates ``key_schema``/``value_schema`` as Kafka Connect does. ``chain.py``
builds a connector's chain from its config.
"""
