"""The Connect-style runtime (connectors, tasks, workers, REST API). Not built yet."""
