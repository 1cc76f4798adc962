"""Prometheus metrics of the broker, named as the common Kafka JMX exporter renders Kafka's own.

``stats`` holds the counters the request path bumps (plain attributes, no locks: the event
loop is their only writer); ``collector`` turns them, and state read at scrape time (logs,
groups, the cluster), into metric families; ``server`` serves ``/metrics`` and ``/ready`` on
``metrics.port``. Off by default: without a port the broker keeps no statistics at all.
See docs/metrics.md.
"""
