"""Debezium's Single Message Transforms that users put next to a Debezium source.

``ExtractNewRecordState`` (``io.debezium.transforms.ExtractNewRecordState``) and the outbox
``EventRouter`` (``io.debezium.transforms.outbox.EventRouter``), with Debezium's key names and
semantics; keys of theirs not implemented here are validation errors naming them.
"""
