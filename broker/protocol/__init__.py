"""The Kafka wire protocol: TCP server, per-connection framing and ordering, and the handlers.

See docs/broker.md for the rules (ordering, bad input, durability, long poll) and the layout.
"""
