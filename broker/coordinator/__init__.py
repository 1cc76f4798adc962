"""The consumer-group coordinator: classic rebalance protocol and committed offsets.

``GroupCoordinator`` (coordinator.py) is the facade the request handlers use; see
docs/coordinator.md for the protocol, the states and the ``__consumer_offsets`` format.
"""

from broker.coordinator.coordinator import GroupCoordinator

__all__ = ["GroupCoordinator"]
