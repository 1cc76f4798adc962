"""Cluster mode: ZooKeeper membership, the controller and replication (docs/cluster.md)."""
