"""Distributed mode: workers with one ``group.id`` share connectors and tasks (docs/distributed.md).

``protocol`` (what members tell each other, the assignor), ``coordinator`` (group membership
over Kafka's group protocol, the liveness fence), ``herder`` (``DistributedHerder``: applies
assignments, forwards REST writes to the leader), ``forward`` (the authenticated forwarding),
``ownership`` (standalone workers refusing topics a group owns), ``writes`` (REST writes: the
leader acts, the others forward).
"""
