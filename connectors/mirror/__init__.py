"""MirrorMaker 2 as hub connectors: replicate topics and consumer positions between clusters.

Three connectors with Kafka's class names and config keys (docs/connectors/mirror.md):

- ``MirrorSourceConnector`` (``source_connector``, ``source_task``): copies records byte for
  byte, creates and grows remote topics, syncs their configs, and writes offset syncs
  (``offset_sync_writer``);
- ``MirrorCheckpointConnector`` (``checkpoint_connector``, ``checkpoint_task``): translates
  consumer group offsets through the offset syncs (``offset_sync_store``) into checkpoints,
  and optionally commits them to idle groups on the target;
- ``MirrorHeartbeatConnector`` (``heartbeat_connector``).

Shared parts: ``config`` (keys and defaults), ``clients`` (confluent-kafka settings from
MM2's prefixes), ``policy`` (remote topic names, cycle detection), ``filters``, ``wire`` (MM2's
binary record formats), ``admin`` and ``scheduler``. ``driver_config`` turns an
``mm2.properties`` file into per-flow worker and connector configs for ``sluice mirror``.
The worker runs on the target cluster; the connectors reach the source with their own clients.
"""
